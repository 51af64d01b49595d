package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/secrets"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
	"github.com/mcpflow/mcpflow/fakes"
)

// TestSecretsSealedRotatedAndRefusedThroughTheBinary runs `mcpflow serve`
// on a SQLite store: the key file is created beside the store at the first
// start, an auth record saved is in none of the store's files in clear,
// `mcpflow secrets rotate` re-seals it under a new key online, which alone
// opens it at the next start, and a start with a wrong or a missing key
// fails, names the key it needs, and loses nothing.
func TestSecretsSealedRotatedAndRefusedThroughTheBinary(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "store")
	data, err := json.Marshal(config.File{Version: 1, Server: config.Server{Store: config.Store{Root: root}}})
	is.NoErr(err)
	cfgPath := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(cfgPath, data, 0o600))
	keyPath := filepath.Join(root, app.KeyFile)
	const token = "tok-binary-5ea1ed-0b7d"

	// First start: the key file is made, owner only, and the record saved
	// is sealed in the database, its WAL and its index.
	first := startProcess(t, cfgPath, "first.log")
	info, err := os.Stat(keyPath)
	is.NoErr(err)                                    // created beside the store
	is.Equal(info.Mode().Perm(), os.FileMode(0o600)) // owner only
	created := keyIDs(t, keyPath)
	is.Equal(len(created), 1)
	c := dialURL(t, first.url)
	var summary map[string]any
	is.NoErr(c.Call(testContext(t), "workflow.admin.auth.save", map[string]any{
		"auth_ref": "github", "scheme": "bearer", "payload": map[string]any{"token": token},
	}, &summary))
	is.True(!storeHolds(t, root, token)) // sealed while the server runs

	// Rotation, online: the command asks the running server.
	out := mcpflowCLI(t, "secrets", "rotate", "--url", first.url, "-o", "json")
	var rot struct {
		KeyID    string   `json:"key_id"`
		Retired  []string `json:"retired_key_ids"`
		Resealed int      `json:"resealed"`
	}
	is.NoErr(json.Unmarshal(out, &rot))
	is.True(rot.KeyID != created[0])
	is.Equal(rot.Retired, created)                    // the old key is retired
	is.Equal(rot.Resealed, 1)                         // the one record re-sealed
	is.Equal(keyIDs(t, keyPath), []string{rot.KeyID}) // and gone from the file
	inspectToken(t, c)                                // readable at once
	first.kill(t)
	is.True(!storeHolds(t, root, token))

	// The new key alone opens the store.
	second := startProcess(t, cfgPath, "second.log")
	inspectToken(t, dialURL(t, second.url))
	second.kill(t)

	// A wrong key under another id, and no key at all: the start fails,
	// names the key, and the store keeps its record.
	good, err := os.ReadFile(keyPath)
	is.NoErr(err)
	wrong, _, err := secrets.LoadOrCreateFile(filepath.Join(dir, "wrong.key"))
	is.NoErr(err)
	wrongFile, err := os.ReadFile(wrong.Path())
	is.NoErr(err)
	is.NoErr(os.WriteFile(keyPath, wrongFile, 0o600))
	msg := failedStart(t, cfgPath)
	is.True(strings.Contains(msg, `"`+rot.KeyID+`"`)) // names the key it needs
	is.True(!strings.Contains(msg, token))

	is.NoErr(os.Remove(keyPath))
	msg = failedStart(t, cfgPath)
	is.True(strings.Contains(msg, `"`+rot.KeyID+`"`)) // names the key it needs
	_, err = os.Stat(keyPath)
	is.True(errors.Is(err, fs.ErrNotExist)) // the key the failed start made is not left behind

	is.NoErr(os.WriteFile(keyPath, good, 0o600))
	third := startProcess(t, cfgPath, "third.log")
	inspectToken(t, dialURL(t, third.url)) // nothing was lost
}

// keyIDs are the ids of the keys in the key file at path.
func keyIDs(t *testing.T, path string) []string {
	t.Helper()
	k, err := secrets.LoadFile(path)
	is.New(t).NoErr(err)
	return k.IDs()
}

// storeHolds reports whether any file under root (the database, its WAL
// and its index) holds value.
func storeHolds(t *testing.T, root, value string) bool {
	t.Helper()
	found := false
	for _, name := range []string{app.DatabaseFile, app.DatabaseFile + "-wal", app.DatabaseFile + "-shm"} {
		data, err := os.ReadFile(filepath.Join(root, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		is.New(t).NoErr(err)
		found = found || bytes.Contains(data, []byte(value))
	}
	return found
}

// inspectToken checks that the github record reads back: a bearer record
// with its token key.
func inspectToken(t *testing.T, c interface {
	Call(ctx context.Context, method string, params, result any) error
}) {
	t.Helper()
	is := is.New(t)
	var got struct {
		Scheme      string   `json:"scheme"`
		PayloadKeys []string `json:"payload_keys"`
	}
	is.NoErr(c.Call(testContext(t), "workflow.admin.auth.inspect", map[string]any{"auth_ref": "github"}, &got))
	is.Equal(got.Scheme, "bearer")
	is.Equal(got.PayloadKeys, []string{"token"})
}

// mcpflowCLI runs the mcpflow binary with args and returns its standard
// output; it fails t if the command fails.
func mcpflowCLI(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcpflow %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// failedStart runs `mcpflow serve` on cfgPath, which must exit with an
// error before serving, and returns what it printed.
func failedStart(t *testing.T, cfgPath string) string {
	t.Helper()
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "serve", "--config", cfgPath, "--listen", freeAddr(t)).CombinedOutput()
	var exit *exec.ExitError
	is.True(errors.As(err, &exit)) // the start fails
	is.True(ctx.Err() == nil)      // by itself, not at the deadline
	return string(out)
}

// TestRegistrySecretsAreSealedAtRestAndStillReachTheUpstream adds two
// sources through the source registry of the real binary, one over HTTP
// with a header and a URL query secret and one over stdio with an env
// secret: none of the three is in the store's files (the database, its
// WAL and its index) as soon as the add answers, nor after `mcpflow
// secrets rotate`, nor once the process stopped and its WAL was
// checkpointed, while both sources connect with their secrets. An entry
// an older release kept in clear is sealed at the next start, and
// connects too.
func TestRegistrySecretsAreSealedAtRestAndStillReachTheUpstream(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts and restarts the real binary")
	}
	is := is.New(t)
	header, query, env, old := unique("header-secret"), unique("query-secret"), unique("env-secret"), unique("old-secret")
	upstream := fakes.NewAuthServer(fakes.AuthOptions{Tokens: []string{header}, Header: "X-Api-Key", Query: map[string]string{"api_key": query}})
	t.Cleanup(upstream.Close)
	dir := t.TempDir()
	cfgPath, root := writeConfig(t, dir), filepath.Join(dir, "store")
	sealedNow := func(when string, secrets ...string) {
		t.Helper()
		for _, s := range secrets {
			if storeHolds(t, root, s) {
				t.Fatalf("%s: a secret of the source registry is in the store's files in clear", when)
			}
		}
	}

	first := startProcess(t, cfgPath, "first.log")
	c := dialURL(t, first.url)
	for _, entry := range []p.Object{
		{"id": "reg.http", "transport": p.Object{"kind": "http", "url": upstream.URL + "?api_key=" + query, "headers": p.Object{"X-Api-Key": header}}},
		{"id": "reg.stdio", "transport": p.Object{"kind": "stdio", "command": fakeMCP, "env": p.Object{"API_KEY": env}}},
	} {
		var added p.RegistryEntryMutationResult
		is.NoErr(c.Call(testContext(t), p.MethodRegistryAdd, p.AddRegistryEntryParams{Entry: entry}, &added))
		sealedNow("after the add, before a checkpoint", header, query, env)
	}
	apply(t, c)
	connects(t, c, first, "reg.http", "reg.stdio", "API_KEY="+env)

	out := mcpflowCLI(t, "secrets", "rotate", "--url", first.url, "-o", "json")
	var rot struct {
		Resealed int `json:"resealed"`
	}
	is.NoErr(json.Unmarshal(out, &rot))
	is.Equal(rot.Resealed, 2) // both entries, re-sealed under the new key
	sealedNow("after secrets rotate", header, query, env)
	first.stop(t)
	sealedNow("after the stop's checkpoint", header, query, env)

	// An entry as a release before sealing kept it: in clear.
	st, err := sqlite.Open(testContext(t), filepath.Join(root, app.DatabaseFile))
	is.NoErr(err)
	is.NoErr(st.PutRegistryEntry(testContext(t), store.RegistryEntry{ID: "reg.old", Kind: "mcp", Enabled: true, Provider: "reg", Account: "old",
		Transport: map[string]any{"kind": "stdio", "command": fakeMCP, "env": map[string]any{"API_KEY": old}}, Metadata: map[string]any{}}))
	is.NoErr(st.Close())
	is.True(storeHolds(t, root, old)) // in clear: the search finds what is there

	second := startProcess(t, cfgPath, "second.log")
	sealedNow("after the next start", header, query, env, old)
	c = dialURL(t, second.url)
	connects(t, c, second, "reg.http", "reg.old", "API_KEY="+old) // live without an apply
	var list p.ListRegistryEntriesResult
	is.NoErr(c.Call(testContext(t), p.MethodRegistryList, p.ListRegistryParams{}, &list))
	is.Equal(list.Total, 3)
	second.stop(t)
	sealedNow("after the second stop", header, query, env, old)
}

// connects checks that the sources httpID and stdioID of pr list their
// catalogs, and that a stdio server (fakemcp) of pr's was started with
// the environment variable env ("NAME=value").
func connects(t *testing.T, c *client.Client, pr *process, httpID, stdioID, env string) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	for _, id := range []string{httpID, stdioID} {
		refreshed, err := c.RefreshConnectionCatalog(testContext(t), id)
		is.NoErr(err) // the upstream took the source's secrets
		is.True(refreshed.NodeCount >= 1)
	}
	is.True(slices.ContainsFunc(upstreams(t, pr.cmd.Process.Pid), func(pid int) bool {
		environ, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
		return err == nil && slices.Contains(strings.Split(string(environ), "\x00"), env)
	})) // the env value reached the server
}
