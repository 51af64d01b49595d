package integration

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// transcript records every answer and every error a client got, to grep
// them for secrets.
type transcript struct {
	t       *testing.T
	c       *client.Client
	entries []string
}

// call invokes method and records its raw answer or its error.
func (tr *transcript) call(method string, params any) (json.RawMessage, error) {
	tr.t.Helper()
	var raw json.RawMessage
	err := tr.c.Call(testContext(tr.t), method, params, &raw)
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			data, _ := json.Marshal(rpcErr) // code, message and data, as sent
			tr.entries = append(tr.entries, method+" error: "+string(data))
		}
		tr.entries = append(tr.entries, method+" error: "+err.Error())
		return nil, err
	}
	tr.entries = append(tr.entries, method+": "+string(raw))
	return raw, nil
}

// must calls a method that must succeed and decodes its answer.
func (tr *transcript) must(method string, params any) map[string]any {
	tr.t.Helper()
	raw, err := tr.call(method, params)
	if err != nil {
		tr.t.Fatalf("%s: %v", method, err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		tr.t.Fatalf("%s: decode %s: %v", method, raw, err)
	}
	return out
}

// eventually calls method until done says its outcome is final (a session
// in backoff after a failed start retries on its own schedule), recording
// every attempt, and returns the last outcome.
func (tr *transcript) eventually(method string, params any, done func(json.RawMessage, error) bool) (json.RawMessage, error) {
	tr.t.Helper()
	var raw json.RawMessage
	var err error
	if !poll.Until(45*time.Second, func() bool { raw, err = tr.call(method, params); return done(raw, err) }) {
		tr.t.Fatalf("%s: no final outcome within 45s: %v", method, err)
	}
	return raw, err
}

func succeeded(_ json.RawMessage, err error) bool { return err == nil }

// finished polls a run until it is no longer running.
func (tr *transcript) finished(runID string) map[string]any {
	tr.t.Helper()
	var run map[string]any
	if !poll.Until(30*time.Second, func() bool {
		run = tr.must("workflow.runs.inspect", map[string]any{"run_id": runID})
		return run["status"] != "running"
	}) {
		tr.t.Fatalf("run %s still running after 30s", runID)
	}
	return run
}

// deployTool saves a one-step workflow around connID's tool and its
// deployment, and returns the deployment id.
func (tr *transcript) deployTool(connID, tool string) string {
	ws, name := strings.ReplaceAll(connID, ".", "_")+"_"+tool, strings.ReplaceAll(connID, ".", "_")+"_"+tool+"_workflow"
	tr.must("workflow.draft_workspaces.create_from_capability", map[string]any{"workspace_id": ws, "capability_name": connID + "." + tool, "name": name})
	saved := tr.must("workflow.draft_workspaces.create_artifact", map[string]any{"workspace_id": ws, "artifact_id": name, "version": 1, "title": name, "outcomes": []string{"ok", "error"}})
	if saved["saved"] != true {
		tr.t.Fatalf("artifact %s not saved: %v", name, saved)
	}
	id := name + ".default"
	tr.must("workflow.deployments.save", map[string]any{"deployment": map[string]any{"id": id, "artifact_id": name, "artifact_version": 1,
		"bindings": []any{map[string]any{"logical_source": connID, "concrete_source": connID}}}})
	return id
}

// run starts a run of deployment and waits until it is done.
func (tr *transcript) run(deployment string, input map[string]any) map[string]any {
	tr.t.Helper()
	if input == nil {
		input = map[string]any{}
	}
	started := tr.must("workflow.runs.start", map[string]any{"deployment_id": deployment, "workflow_input": input})
	id, _ := started["run_id"].(string)
	if id == "" {
		tr.t.Fatalf("run of %s did not start: %v", deployment, started)
	}
	run := tr.finished(id)
	tr.must("workflow.runs.trace", map[string]any{"run_id": id, "trace_range": map[string]any{"start": 0, "limit": 100}})
	return run
}

func unique(prefix string) string { return prefix + "-" + rand.Text() }

// all is every answer and error of tr, one per line.
func all(tr *transcript) string { return strings.Join(tr.entries, "\n") }

// closedAddr is a loopback address that refuses every connection until
// the test ends. A socket bound to its port, and never listening, holds
// the port: no listener of this process or another can take it, as one
// could take a port a listener freed a moment ago (go test runs
// packages' tests side by side, each listening on ports the kernel hands
// out).
func closedAddr(t *testing.T) string {
	t.Helper()
	is := is.New(t)
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	is.NoErr(err) // a socket to hold the port
	t.Cleanup(func() { _ = syscall.Close(fd) })
	is.NoErr(syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})) // a port of the kernel's choosing
	bound, err := syscall.Getsockname(fd)
	is.NoErr(err)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(bound.(*syscall.SockaddrInet4).Port))
}

// headerRecorder is an HTTP server that records every request's headers
// and URL, and answers 404.
type headerRecorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newHeaderRecorder(t *testing.T) *headerRecorder {
	h := &headerRecorder{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.seen = append(h.seen, fmt.Sprintf("%s %v", r.URL, r.Header))
		h.mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *headerRecorder) requests() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.seen)
}

// saw reports whether any request carried s in its URL or a header.
func (h *headerRecorder) saw(s string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.ContainsFunc(h.seen, func(r string) bool { return strings.Contains(r, s) })
}

// TestSecretsAppearInNoResponseLogOrError saves credentials with unique
// secret values, runs workflows through sessions that use them (bearer and
// oauth_refresh_token over HTTP, env over stdio), provokes failures (a
// token the upstream refuses and echoes, a malformed save, a revoked oauth
// token), calls every read method, stops the binary, and greps every
// answer, every error and the whole debug log: no secret appears.
func TestSecretsAppearInNoResponseLogOrError(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	bearer, wrong := unique("bearer-secret"), unique("wrong-secret")
	refresh, clientSecret := unique("refresh-secret"), unique("client-secret")
	envSecret := unique("env-secret")
	urlSecret, headerSecret := unique("url-secret"), unique("header-secret")

	bearerUp := fakes.NewAuthServer(fakes.AuthOptions{Tokens: []string{bearer}, Echo: true})
	t.Cleanup(bearerUp.Close)
	oauthUp := fakes.NewAuthServer(fakes.AuthOptions{ClientID: "mcpflow", ClientSecret: clientSecret, RefreshToken: refresh, ExpiresIn: 3600, Echo: true})
	t.Cleanup(oauthUp.Close)

	ref := func(s string) *string { return &s }
	// Secrets in the config itself: a URL query value and a header, on a
	// source that works, one that is down, and one whose endpoint
	// redirects to another origin, which must see neither.
	elsewhere := newHeaderRecorder(t)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirecting.Close)
	configured := func(id, url string, auth *string) config.Connection {
		return config.Connection{Kind: "mcp", ID: id, AuthRef: auth, Transport: config.Transport{Kind: config.TransportHTTP,
			URL: url + "?api_key=" + urlSecret, Headers: map[string]string{"X-Api-Key": headerSecret}}}
	}
	dir := t.TempDir()
	storeRoot := filepath.Join(dir, "store")
	envTool := stdioSource("tool.env", fakeMCP)
	envTool.AuthRef = ref("tool-cred")
	envTool.Transport.Env = map[string]string{"FAKEMCP_STDERR_ENV": "API_KEY", "API_KEY": "overridden-by-the-record"}
	cfg := config.File{Version: 1, Server: config.Server{Store: config.Store{Root: storeRoot}, Sources: []config.Connection{
		{Kind: "mcp", ID: "secure.default", AuthRef: ref("secure-cred"), Transport: config.Transport{Kind: config.TransportHTTP, URL: bearerUp.URL}},
		{Kind: "mcp", ID: "wrong.default", AuthRef: ref("wrong-cred"), Transport: config.Transport{Kind: config.TransportHTTP, URL: bearerUp.URL}},
		{Kind: "mcp", ID: "oauth.default", AuthRef: ref("oauth-cred"), Transport: config.Transport{Kind: config.TransportHTTP, URL: oauthUp.URL}},
		envTool,
		configured("query.default", bearerUp.URL, ref("secure-cred")),
		configured("down.default", "http://"+closedAddr(t)+"/mcp", nil),
		configured("redirect.default", redirecting.URL+"/mcp", nil),
	}}}
	data, err := json.Marshal(cfg)
	is.NoErr(err)
	cfgPath := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(cfgPath, data, 0o600))

	proc := startProcess(t, cfgPath, "mcpflow.log", "--log-level", "debug") // every log line mcpflow can write
	tr := &transcript{t: t, c: dialURL(t, proc.url)}

	// Save the credentials (and one the save must refuse, naming no value).
	for _, save := range []map[string]any{
		{"auth_ref": "secure-cred", "scheme": "bearer", "payload": map[string]any{"token": bearer}, "metadata": map[string]any{"owner": "integration"}},
		{"auth_ref": "wrong-cred", "scheme": "bearer", "payload": map[string]any{"access_token": wrong}},
		{"auth_ref": "oauth-cred", "scheme": "oauth_refresh_token", "payload": map[string]any{
			"client_id": "mcpflow", "client_secret": clientSecret, "refresh_token": refresh, "token_url": oauthUp.TokenURL, "scopes": []string{"mcp.read", "mcp.write"}}},
		{"auth_ref": "tool-cred", "scheme": "env", "payload": map[string]any{"env": map[string]any{"API_KEY": envSecret}}},
	} {
		summary := tr.must("workflow.admin.auth.save", save)
		is.Equal(summary["id"], save["auth_ref"])
	}
	_, err = tr.call("workflow.admin.auth.save", map[string]any{"auth_ref": "broken", "scheme": "bearer", "payload": map[string]any{"tok": bearer}})
	is.True(err != nil) // a bearer record needs a token

	// Sessions that use them: catalogs, then runs.
	for _, id := range []string{"secure.default", "oauth.default", "tool.env"} {
		tr.eventually("workflow.admin.connections.refresh_catalog", map[string]any{"connection_id": id}, succeeded)
	}
	echo := tr.deployTool("secure.default", "echo")
	is.Equal(tr.run(echo, map[string]any{"message": "hello"})["output"], map[string]any{"message": "hello"})
	counter := tr.deployTool("oauth.default", "counter")
	is.Equal(tr.run(counter, nil)["status"], "completed")
	envCounter := tr.deployTool("tool.env", "counter")
	is.Equal(tr.run(envCounter, nil)["status"], "completed")
	tr.eventually("workflow.admin.connections.refresh_catalog", map[string]any{"connection_id": "query.default"}, succeeded)
	queryEcho := tr.deployTool("query.default", "echo")
	is.Equal(tr.run(queryEcho, map[string]any{"message": "hi"})["status"], "completed")
	for _, id := range []string{"down.default", "redirect.default"} {
		_, err := tr.call("workflow.admin.connections.refresh_catalog", map[string]any{"connection_id": id})
		if err == nil {
			t.Logf("the catalog of %s was refreshed: something answered at its URL", id)
		}
		is.True(err != nil) // nothing to reach: the error names the URL, redacted
	}
	is.True(elsewhere.requests() > 0) // the redirect was followed, without the configured header

	// The upstream drops its tokens: one refresh, one retry, and the run
	// still completes. Over all of it, two refreshes: none per call or
	// per session.
	oauthUp.Revoke()
	is.Equal(tr.run(counter, nil)["status"], "completed")
	is.Equal(oauthUp.Refreshes(), 2)

	// A token the upstream refuses, and quotes in its refusal.
	_, err = tr.eventually("workflow.admin.connections.refresh_catalog", map[string]any{"connection_id": "wrong.default"},
		func(_ json.RawMessage, err error) bool {
			return err == nil || strings.Contains(err.Error(), "Unauthorized")
		})
	is.True(err != nil)                // refused...
	is.True(bearerUp.Rejections() > 0) // ...with a 401 that quoted the token
	_, err = tr.call("workflow.admin.auth.inspect", map[string]any{"auth_ref": "missing"})
	is.True(err != nil)

	// Every read method.
	list := tr.must("workflow.admin.auth.list", nil)
	is.Equal(list["total"], float64(4))
	for _, id := range []string{"secure-cred", "wrong-cred", "oauth-cred", "tool-cred"} {
		tr.must("workflow.admin.auth.inspect", map[string]any{"auth_ref": id})
	}
	for _, m := range []string{"workflow.health", "workflow.admin.connections.list", "workflow.admin.connection_statuses.list",
		"workflow.admin.events.list", "workflow.sources.list", "workflow.capabilities.list", "workflow.runs.list",
		"workflow.deployments.list", "workflow.artifacts.list", "workflow.draft_workspaces.list", "workflow.admin.source_registry.list"} {
		_, _ = tr.call(m, nil) // methods not served yet answer an error, which is grepped too
	}
	for _, id := range []string{"secure.default", "wrong.default", "oauth.default", "tool.env", "query.default", "down.default", "redirect.default"} {
		_, _ = tr.call("workflow.sources.inspect", map[string]any{"source_id": id})
		_, _ = tr.call("workflow.sources.diagnose", map[string]any{"source_id": id})
		_, _ = tr.call("workflow.capabilities.list", map[string]any{"source_id": id})
	}
	for _, d := range []string{echo, counter, envCounter, queryEcho} {
		_, _ = tr.call("workflow.deployments.validate", map[string]any{"deployment_id": d, "live_check": true})
	}
	var runs struct {
		Runs []struct {
			RunID string `json:"run_id"`
		} `json:"runs"`
	}
	raw, err := tr.call("workflow.runs.list", map[string]any{"limit": 100})
	is.NoErr(err)
	is.NoErr(json.Unmarshal(raw, &runs))
	is.Equal(len(runs.Runs), 5)
	for _, r := range runs.Runs {
		tr.must("workflow.runs.inspect", map[string]any{"run_id": r.RunID})
		tr.must("workflow.runs.trace", map[string]any{"run_id": r.RunID, "trace_range": map[string]any{"limit": 100}})
	}

	// Stop the binary, so that its log is complete.
	is.NoErr(proc.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-proc.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("mcpflow did not stop within 20s of SIGTERM")
	}
	logs, err := os.ReadFile(proc.logs)
	is.NoErr(err)

	secrets := append([]string{bearer, wrong, refresh, clientSecret, envSecret, urlSecret, headerSecret}, oauthUp.Minted()...)
	is.Equal(len(secrets), 9) // two access tokens were minted
	for _, s := range secrets {
		for _, e := range tr.entries {
			if strings.Contains(e, s) {
				t.Errorf("a response or error shows a secret: %s", e)
			}
		}
		if strings.Contains(string(logs), s) {
			t.Errorf("the log shows a secret:\n%s", logs)
		}
		if elsewhere.saw(s) {
			t.Errorf("a request to another origin carried a secret")
		}
	}
	is.True(strings.Contains(all(tr), "api_key=[redacted]")) // the URL is shown, its query value is not
	// What was grepped saw the credentials at work, redacted.
	is.True(strings.Contains(all(tr), "[redacted]")) // the refused token the upstream echoed
	// The stdio server printed its env; its stderr loses what a status
	// loses, so the variable's name goes too (a configured env value).
	is.True(strings.Contains(string(logs), "fakemcp: [redacted]=[redacted]"))
	is.True(strings.Contains(string(logs), "oauth access token refreshed"))

	// The store, credentials included, is readable by its owner only.
	for _, name := range []string{app.DatabaseFile, app.DatabaseFile + "-wal"} {
		info, err := os.Stat(filepath.Join(storeRoot, name))
		if errors.Is(err, os.ErrNotExist) && name != app.DatabaseFile {
			continue
		}
		is.NoErr(err)
		is.Equal(info.Mode().Perm(), os.FileMode(0o600)) // owner read/write only
	}
	t.Logf("grepped %d answers and errors and %d bytes of log for %d secrets", len(tr.entries), len(logs), len(secrets))
}
