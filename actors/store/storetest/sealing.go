package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/secrets"
	"github.com/mcpflow/mcpflow/actors/store"
)

// Values of the auth records Sealing saves: none may be found at rest.
const (
	sealedBearer       = "bearer-5ea1ed-7c41"
	sealedRefreshToken = "refresh-5ea1ed-9d02"
	sealedClientSecret = "client-5ea1ed-e3b8"
	sealedLater        = "later-5ea1ed-11fa"
	sealedEnv          = "env-5ea1ed-40c7"
	sealedHeader       = "header-5ea1ed-a81e"
	sealedQuery        = "query-5ea1ed-6b3d"
	sealedLaterHeader  = "header-5ea1ed-f092"
)

// sealedEntries are source registry entries: an http source with a
// header and a URL query secret, a stdio source with an env secret, and
// one with no secret at all.
func sealedEntries() []store.RegistryEntry {
	entry := func(id string, transport map[string]any) store.RegistryEntry {
		return store.RegistryEntry{ID: id, Kind: "mcp", Enabled: true, Provider: id, Account: "default", Transport: transport, Metadata: map[string]any{}}
	}
	return []store.RegistryEntry{
		entry("api", map[string]any{"kind": "http", "url": "https://mcp.example.com/mcp?api_key=" + sealedQuery,
			"headers": map[string]any{"X-Api-Key": sealedHeader}}),
		entry("plain", map[string]any{"kind": "stdio", "command": "plain-mcp"}),
		entry("tool", map[string]any{"kind": "stdio", "command": "tool-mcp", "args": []any{"--stdio"}, "env": map[string]any{"API_KEY": sealedEnv}}),
	}
}

// sealedRecords are a bearer token and an OAuth refresh token with its
// client secret.
func sealedRecords() []store.AuthRecord {
	return []store.AuthRecord{
		{ID: "github", Scheme: "bearer", Payload: map[string]any{"token": sealedBearer}, Metadata: map[string]any{"owner": "ops"}},
		{ID: "linear", Scheme: "oauth_refresh_token", Payload: map[string]any{
			"client_id": "mcpflow", "client_secret": sealedClientSecret, "refresh_token": sealedRefreshToken,
			"token_url": "https://auth.example.com/token", "scopes": []any{"read"},
		}, Metadata: map[string]any{}},
	}
}

// Opener opens the same durable store at each call, with opts; its error
// is Open's.
type Opener func(t *testing.T, opts ...store.Option) (store.Store, error)

// Sealing checks a durable store that seals auth payloads (WithSealer) on
// one store, step by step: a store written in clear (as by a release
// before sealing) is sealed at its first open with a key; what is then
// saved is sealed too; a sealed payload moved to another record does not
// open; a missing or a wrong key fails the open, names the key, and
// changes no record; a rotation leaves every record readable under the
// new key alone. atRest returns every byte the store keeps (its files, or
// a dump of its database): no secret value may be in it once sealed.
func Sealing(t *testing.T, open Opener, atRest func(t *testing.T) []byte) {
	is := is.New(t)
	ctx := t.Context()
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "secrets.key")
	want, wantEntries := sealedRecords(), sealedEntries()
	secretsOf := []string{sealedBearer, sealedRefreshToken, sealedClientSecret, sealedEnv, sealedHeader, sealedQuery, sealedLaterHeader}

	// A release before sealing kept the payloads in clear.
	s := mustOpen(t, open)
	for _, a := range want {
		is.NoErr(s.SaveAuth(ctx, a))
	}
	for _, e := range wantEntries {
		is.NoErr(s.PutRegistryEntry(ctx, e))
	}
	is.NoErr(s.Close())
	is.True(bytes.Contains(atRest(t), []byte(sealedRefreshToken))) // in clear before: the search finds what is there
	is.True(bytes.Contains(atRest(t), []byte(sealedEnv)))

	// The first open with a key seals them.
	keys, created, err := secrets.LoadOrCreateFile(keyPath)
	is.NoErr(err)
	is.True(created)
	first := keys.Current()
	s = mustOpen(t, open, store.WithSealer(keys))
	is.Equal(listAuth(t, s), want)           // every record reads back as it was saved
	is.Equal(listEntries(t, s), wantEntries) // every entry too
	later := store.AuthRecord{ID: "later", Scheme: "headers", Payload: map[string]any{"headers": map[string]any{"X-Api-Key": sealedLater}}, Metadata: map[string]any{}}
	is.NoErr(s.SaveAuth(ctx, later))
	want = []store.AuthRecord{want[0], later, want[1]}
	is.Equal(listAuth(t, s), want)
	laterEntry := sealedEntries()[0]
	laterEntry.ID, laterEntry.Transport["headers"] = "later", map[string]any{"Authorization": sealedLaterHeader}
	is.NoErr(s.PutRegistryEntry(ctx, laterEntry))
	wantEntries = []store.RegistryEntry{wantEntries[0], laterEntry, wantEntries[1], wantEntries[2]}
	got, err := s.GetRegistryEntry(ctx, "later")
	is.NoErr(err)
	is.Equal(got, laterEntry)                                 // reads back as it was put
	noSecretAtRest(t, atRest, append(secretsOf, sealedLater)) // while open...
	is.NoErr(s.Close())
	noSecretAtRest(t, atRest, append(secretsOf, sealedLater)) // ...and closed

	// As kept: every payload sealed under the key, none in clear.
	kept := keptAuth(t, open)
	for _, a := range kept {
		id, ok := secrets.KeyOf(a.Sealed)
		is.True(ok)         // sealed
		is.Equal(id, first) // under the key
		is.Equal(a.Payload, nil)
	}
	for _, e := range keptEntries(t, open) {
		if e.ID == "plain" {
			is.Equal(e, wantEntries[2]) // nothing secret: kept as it is
			continue
		}
		id, ok := secrets.KeyOf(e.Sealed)
		is.True(ok)         // sealed
		is.Equal(id, first) // under the key
		for _, k := range []string{"env", "headers", "url"} {
			is.Equal(e.Transport[k], nil) // and not in clear
		}
		is.True(e.Transport["kind"] != nil) // what is not secret is
	}

	// A payload moved to another record does not open there.
	raw := mustOpen(t, open)
	moved := kept[0]
	moved.ID = "moved"
	is.NoErr(raw.SaveAuth(ctx, moved))
	is.NoErr(raw.Close())
	_, err = open(t, store.WithSealer(keys))
	is.True(errors.Is(err, secrets.ErrWrongKey))                   // the record id is part of what is sealed
	is.True(strings.Contains(err.Error(), `"moved"`))              // the error names the record
	is.Equal(keptAuth(t, open), append(slices.Clone(kept), moved)) // and nothing was changed
	raw = mustOpen(t, open)
	_, err = raw.DeleteAuth(ctx, "moved")
	is.NoErr(err)
	is.NoErr(raw.Close())

	// A missing key and a wrong key fail the open, name the key, and
	// change nothing.
	other, _, err := secrets.LoadOrCreateFile(filepath.Join(dir, "other.key"))
	is.NoErr(err)
	wrong := keyFileNamed(t, filepath.Join(dir, "wrong.key"), first)
	for _, tc := range []struct {
		keys *secrets.Keyring
		want error
	}{{other, secrets.ErrMissingKey}, {wrong, secrets.ErrWrongKey}} {
		_, err = open(t, store.WithSealer(tc.keys))
		is.True(errors.Is(err, tc.want))                      // refused
		is.True(strings.Contains(err.Error(), `"`+first+`"`)) // naming the key it needs
		for _, v := range append(secretsOf, sealedLater) {
			is.True(!strings.Contains(err.Error(), v)) // and no secret
		}
		is.Equal(keptAuth(t, open), kept) // nothing changed
	}

	// A rotation seals every record under a new key; the old key is no
	// longer needed.
	s = mustOpen(t, open, store.WithSealer(keys))
	rot, err := keys.Rotate(ctx, s.(store.Resealer).Reseal)
	is.NoErr(err)
	is.True(rot.KeyID != first)
	is.Equal(rot.Retired, []string{first})
	is.Equal(rot.Resealed, len(want)+len(wantEntries)-1) // every record and entry but the one with no secret
	is.Equal(keys.IDs(), []string{rot.KeyID})
	is.Equal(listAuth(t, s), want)           // readable at once
	is.Equal(listEntries(t, s), wantEntries) // and so is every entry
	is.NoErr(s.Close())
	for _, a := range keptAuth(t, open) {
		id, _ := secrets.KeyOf(a.Sealed)
		is.Equal(id, rot.KeyID) // every record under the new key
	}
	for _, e := range keptEntries(t, open) {
		if id, ok := secrets.KeyOf(e.Sealed); ok {
			is.Equal(id, rot.KeyID) // every sealed entry too
		}
	}
	reread, err := secrets.LoadFile(keyPath)
	is.NoErr(err)
	is.Equal(reread.IDs(), []string{rot.KeyID}) // the file holds the new key alone
	s = mustOpen(t, open, store.WithSealer(reread))
	is.Equal(listAuth(t, s), want)           // which opens every record
	is.Equal(listEntries(t, s), wantEntries) // and every entry
	noSecretAtRest(t, atRest, secretsOf)

	// Online: records saved before, while and after a rotation all open
	// under the new key alone.
	saved := rotateWhileSaving(t, s, reread)
	is.NoErr(s.Close())
	final, err := secrets.LoadFile(keyPath)
	is.NoErr(err)
	is.Equal(len(final.IDs()), 1)
	s = mustOpen(t, open, store.WithSealer(final)) // every record opens under it
	list := listAuth(t, s)
	is.Equal(len(list), len(want)+saved)
	is.NoErr(s.Close())

	// A save that sealed under the old key just before a rotation began
	// is re-sealed by it, however late it reaches the store.
	gated := &gatedSealer{Keyring: final, entered: make(chan struct{}), gate: make(chan struct{})}
	s = mustOpen(t, open, store.WithSealer(gated))
	gated.armed.Store(true) // the next seal is the save's
	done := make(chan error, 1)
	go func() {
		done <- s.SaveAuth(ctx, store.AuthRecord{ID: "late", Scheme: "bearer", Payload: map[string]any{"token": sealedLater}, Metadata: map[string]any{}})
	}()
	select {
	case <-gated.entered: // sealed under the old key, not stored yet
	case err := <-done:
		t.Fatalf("the save returned before it sealed: %v", err)
	}
	_, err = final.Rotate(ctx, func(ctx context.Context) (int, error) {
		close(gated.gate) // the save goes on as the re-seal begins
		return s.(store.Resealer).Reseal(ctx)
	})
	is.NoErr(err)
	is.NoErr(<-done)
	is.NoErr(s.Close())
	last, err := secrets.LoadFile(keyPath)
	is.NoErr(err)
	s = mustOpen(t, open, store.WithSealer(last)) // the new key alone opens it
	is.Equal(len(listAuth(t, s)), len(want)+saved+1)
	is.NoErr(s.Close())
	noSecretAtRest(t, atRest, append(secretsOf, sealedLater))
}

// gatedSealer is a Keyring whose first Seal once armed, having sealed,
// waits for gate before it returns: a save held between its seal and its
// write.
type gatedSealer struct {
	*secrets.Keyring
	armed   atomic.Bool
	entered chan struct{} // closed when the held Seal has sealed
	gate    chan struct{} // closed to let it return
}

func (g *gatedSealer) Seal(aad, plaintext []byte) (string, error) {
	sealed, err := g.Keyring.Seal(aad, plaintext)
	if g.armed.CompareAndSwap(true, false) {
		close(g.entered)
		<-g.gate
	}
	return sealed, err
}

// rotateWhileSaving rotates keys while four writers save auth records to
// s, from before the rotation begins until after it ended, and returns
// how many records they saved.
func rotateWhileSaving(t *testing.T, s store.Store, keys *secrets.Keyring) int {
	t.Helper()
	is := is.New(t)
	const writers, most = 4, 500
	started, rotated := make(chan struct{}, writers), make(chan struct{})
	counts := make(chan int, writers)
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			n, after := 0, false
			defer func() { counts <- n }()
			for n < most {
				select {
				case <-rotated:
					if after {
						return
					}
					after = true // one more save, after the rotation
				default:
				}
				rec := store.AuthRecord{ID: fmt.Sprintf("busy-%d-%03d", w, n), Scheme: "bearer", Payload: map[string]any{"token": sealedLater}, Metadata: map[string]any{}}
				if err := s.SaveAuth(t.Context(), rec); err != nil {
					errs <- err
					return
				}
				if n++; n == 1 {
					started <- struct{}{}
				}
			}
		}()
	}
	for range writers {
		select {
		case <-started:
		case err := <-errs:
			t.Fatalf("save before the rotation: %v", err)
		}
	}
	_, err := keys.Rotate(t.Context(), s.(store.Resealer).Reseal)
	close(rotated)
	is.NoErr(err)
	total := 0
	for range writers {
		total += <-counts
	}
	select {
	case err := <-errs:
		is.NoErr(err) // every save succeeds
	default:
	}
	return total
}

// mustOpen opens the store or fails t.
func mustOpen(t *testing.T, open Opener, opts ...store.Option) store.Store {
	t.Helper()
	s, err := open(t, opts...)
	if err != nil {
		t.Fatalf("open the store: %v", err)
	}
	return s
}

// listAuth lists s's auth records or fails t.
func listAuth(t *testing.T, s store.Store) []store.AuthRecord {
	return listed(t, s, store.Store.ListAuth)
}

// keptAuth lists the auth records as the store keeps them.
func keptAuth(t *testing.T, open Opener) []store.AuthRecord {
	return kept(t, open, store.Store.ListAuth)
}

// listEntries lists s's source registry entries or fails t.
func listEntries(t *testing.T, s store.Store) []store.RegistryEntry {
	return listed(t, s, store.Store.ListRegistryEntries)
}

// keptEntries lists the source registry entries as the store keeps them.
func keptEntries(t *testing.T, open Opener) []store.RegistryEntry {
	return kept(t, open, store.Store.ListRegistryEntries)
}

// listed is what list lists of s, or fails t.
func listed[T any](t *testing.T, s store.Store, list func(store.Store, context.Context) ([]T, error)) []T {
	t.Helper()
	out, err := list(s, t.Context())
	is.New(t).NoErr(err)
	return out
}

// kept is what list lists of the store as it keeps it, opening it
// without a sealer.
func kept[T any](t *testing.T, open Opener, list func(store.Store, context.Context) ([]T, error)) []T {
	t.Helper()
	s := mustOpen(t, open)
	defer s.Close()
	return listed(t, s, list)
}

// noSecretAtRest fails t if any of values is in what the store keeps.
func noSecretAtRest(t *testing.T, atRest func(t *testing.T) []byte, values []string) {
	t.Helper()
	kept := atRest(t)
	for _, v := range values {
		if bytes.Contains(kept, []byte(v)) {
			t.Fatalf("a secret value is at rest in clear (%d bytes searched)", len(kept))
		}
	}
}

// keyFileNamed writes a key file at path whose one key has id but random
// bytes: a wrong key under the right name.
func keyFileNamed(t *testing.T, path, id string) *secrets.Keyring {
	t.Helper()
	is := is.New(t)
	_, _, err := secrets.LoadOrCreateFile(path)
	is.NoErr(err)
	data, err := os.ReadFile(path)
	is.NoErr(err)
	var f map[string]any
	is.NoErr(json.Unmarshal(data, &f))
	f["current"] = id
	f["keys"].([]any)[0].(map[string]any)["id"] = id
	data, err = json.Marshal(f)
	is.NoErr(err)
	is.NoErr(os.WriteFile(path, data, 0o600))
	k, err := secrets.LoadFile(path)
	is.NoErr(err)
	return k
}
