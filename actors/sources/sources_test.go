package sources_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor/supervisortest"
	"github.com/mcpflow/mcpflow/fakes"
)

// patience bounds every wait that only a broken actor would reach.
const patience = 10 * time.Second

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

func stdio(id, ownership string) config.Connection {
	return config.Connection{Kind: "mcp", ID: id, Ownership: ownership, Transport: config.Transport{Kind: config.TransportStdio, Command: "server"}}
}

func entryDoc(id string) map[string]any {
	return map[string]any{"id": id, "transport": map[string]any{"kind": "stdio", "command": "reg-server"}}
}

// kinds returns the kinds of the admin events st holds, in order.
func kinds(t *testing.T, st store.Store) []string {
	t.Helper()
	evs, err := st.ListEvents(bounded(t), 0, 0)
	is.New(t).NoErr(err)
	out := []string{}
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

// loaded returns the sources of a fresh store as the app loads them,
// reconciled by a real supervisor whose upstreams are in-process fakes.
func loaded(t *testing.T, configured ...config.Connection) (*sources.Sources, *config.View, store.Store) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	st := store.NewMemory()
	view, err := sources.Load(bounded(t), st, configured)
	is.NoErr(err) // the sources load
	e, err := actor.NewEngine(actor.NewEngineConfig())
	is.NoErr(err)
	sup := supervisortest.Spawn(t, e, view.All(), fakes.NewInMemory(nil), st, supervisortest.Options())
	return sources.New(st, view, sup), view, st
}

// Every failure of an operation is of one kind, which the API maps to
// its error code, with a message that says what failed.
func TestOperationsFailWithOneKindOfError(t *testing.T) {
	is := is.New(t)
	src, _, _ := loaded(t, stdio("locked.one", config.OwnershipLocked))
	ctx := bounded(t)
	_, err := src.Add(ctx, entryDoc("reg.one"))
	is.NoErr(err) // a new entry is added

	for _, tc := range []struct {
		what string
		err  error
		kind error
	}{
		{"a duplicate", second(src.Add(ctx, entryDoc("reg.one"))), sources.ErrRefused},
		{"a locked id", second(src.Add(ctx, entryDoc("locked.one"))), sources.ErrRefused},
		{"a reserved id", second(src.Add(ctx, entryDoc("wf.std"))), sources.ErrRefused},
		{"an unknown key", second(src.Add(ctx, map[string]any{"id": "reg.two", "transport": map[string]any{"kind": "stdio", "command": "x"}, "colour": "red"})), sources.ErrMalformed},
		{"no transport", second(src.Add(ctx, map[string]any{"id": "reg.two"})), sources.ErrMalformed},
		{"no id", second(src.Inspect(ctx, "")), sources.ErrMalformed},
		{"an unknown id", second(src.Inspect(ctx, "nobody.here")), sources.ErrUnknown},
		{"a patched id", second(src.Update(ctx, "reg.one", map[string]any{"id": "reg.other"})), sources.ErrMalformed},
		{"an unknown removal", second(src.Remove(ctx, "nobody.here")), sources.ErrUnknown},
	} {
		kinds := 0
		for _, k := range []error{sources.ErrMalformed, sources.ErrUnknown, sources.ErrRefused, sources.ErrFailed} {
			if errors.Is(tc.err, k) {
				kinds++
			}
		}
		if !errors.Is(tc.err, tc.kind) || kinds != 1 {
			t.Logf("%s: %v", tc.what, tc.err)
		}
		is.True(errors.Is(tc.err, tc.kind)) // the failure is of its kind
		is.Equal(kinds, 1)                  // and of no other
		is.True(tc.err.Error() != "")       // with a message
	}
}

func second[T any](_ T, err error) error { return err }

// countingAnnouncer counts the applies announced to the cluster.
type countingAnnouncer struct{ n atomic.Int64 }

func (a *countingAnnouncer) SourcesApplied() { a.n.Add(1) }

// An apply changes the effective sources and tells the other nodes; a
// login's reapply tells them too; following another node's apply tells
// no one (it was that node's to announce) and records no event.
func TestApplyAnnouncesToTheClusterAndFollowDoesNot(t *testing.T) {
	is := is.New(t)
	src, view, st := loaded(t)
	announced := &countingAnnouncer{}
	src.Announce = announced
	ctx := bounded(t)
	_, err := src.Add(ctx, entryDoc("reg.one"))
	is.NoErr(err)
	before := view.Version()

	done, err := src.Apply(ctx)
	is.NoErr(err) // the apply succeeds
	is.Equal(done.Registered, []string{"reg.one"})
	is.Equal(done.Connections, 1)
	is.Equal(done.Entries, 1)
	_, live := view.Get("reg.one")
	is.True(live)                     // the entry is an effective source
	is.True(view.Version() != before) // and what was derived from the old set is stale
	is.Equal(announced.n.Load(), int64(1))
	is.Equal(kinds(t, st), []string{audit.ConnectionRegistered})

	_, err = src.SetEnabled(ctx, "reg.one", false)
	is.NoErr(err)
	is.NoErr(src.Follow(ctx)) // as another node applied it
	c, _ := view.Get("reg.one")
	is.True(!c.IsEnabled())                                      // the view follows
	is.Equal(announced.n.Load(), int64(1))                       // nobody is told
	is.Equal(kinds(t, st), []string{audit.ConnectionRegistered}) // nothing is recorded

	is.NoErr(src.Reapply(ctx))
	is.Equal(announced.n.Load(), int64(2)) // a reapply is announced
}

// A seed-owned configured connection seeds the registry at the first
// load, which records it; the registry's entry then wins over the config.
func TestLoadSeedsTheRegistryOnce(t *testing.T) {
	is := is.New(t)
	st := store.NewMemory()
	seed := stdio("seed.one", config.OwnershipSeed)
	_, err := sources.Load(bounded(t), st, []config.Connection{seed})
	is.NoErr(err)
	e, err := st.GetRegistryEntry(bounded(t), "seed.one")
	is.NoErr(err) // the registry has the seeded entry
	is.Equal(e.Kind, sources.KindMCP)
	is.Equal(kinds(t, st), []string{audit.RegistrySeeded})

	_, err = sources.Load(bounded(t), st, []config.Connection{seed})
	is.NoErr(err)
	is.Equal(kinds(t, st), []string{audit.RegistrySeeded, audit.RegistrySeedEntryWins}) // no second seeding
}
