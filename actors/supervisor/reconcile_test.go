package supervisor_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// witness wraps a transport factory: it keeps every connection a transport
// was made for and counts the kills of those transports (for a stdio
// server, the end of its process group).
type witness struct {
	inner session.TransportFactory
	kills atomic.Int64

	mu    sync.Mutex
	conns []config.Connection
}

func (w *witness) NewTransport(c config.Connection) (mcp.Transport, error) {
	t, err := w.inner.NewTransport(c)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.conns = append(w.conns, c)
	w.mu.Unlock()
	return &killCounted{Transport: t, w: w}, nil
}

// madeFor returns the connections transports were made for, for id.
func (w *witness) madeFor(id string) []config.Connection {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []config.Connection
	for _, c := range w.conns {
		if c.ID == id {
			out = append(out, c)
		}
	}
	return out
}

type killCounted struct {
	mcp.Transport
	w *witness
}

func (k *killCounted) Kill() error {
	k.w.kills.Add(1)
	if inner, ok := k.Transport.(session.Killer); ok {
		return inner.Kill()
	}
	return nil
}

// observed is a supervisor over in-memory upstreams whose closes and kills
// the test sees.
func observed(t *testing.T, opts supervisor.Options) (*sup, *fakes.CloseObserver, *witness) {
	w := &witness{inner: fakes.NewInMemory(nil)}
	obs := fakes.ObserveCloses(w)
	return start(t, obs, opts), obs, w
}

func without(conns []config.Connection, id string) []config.Connection {
	var out []config.Connection
	for _, c := range conns {
		if c.ID != id {
			out = append(out, c)
		}
	}
	return out
}

// changed returns conns with id's connection changed by edit.
func changed(conns []config.Connection, id string, edit func(*config.Connection)) []config.Connection {
	out := append([]config.Connection(nil), conns...)
	for i := range out {
		if out[i].ID == id {
			edit(&out[i])
		}
	}
	return out
}

func (s *sup) reconcile(t *testing.T, conns []config.Connection) supervisor.Reconciled {
	t.Helper()
	is := is.New(t)
	is.Helper()
	r, err := s.handle.Reconcile(ctx(t), conns)
	is.NoErr(err) // the supervisor answers the reconcile
	return r
}

func statusIDs(t *testing.T, s *sup) []string {
	t.Helper()
	all, err := s.handle.Statuses(ctx(t))
	is.New(t).NoErr(err)
	var ids []string
	for _, st := range all {
		ids = append(ids, st.Connection)
	}
	return ids
}

func TestReconcileAddsAConnectionWithASessionAndACatalog(t *testing.T) {
	is := is.New(t)
	s, _, w := observed(t, testOptions())
	added := config.Connection{Kind: "mcp", ID: "fake.three", Transport: config.Transport{Kind: "inmemory"}}

	r := s.reconcile(t, append(conns(), added))
	is.Equal(r.Registered, []string{"fake.three"})
	is.Equal(len(r.Updated)+len(r.Removed)+len(r.Stopped), 0)
	is.Equal(statusIDs(t, s), []string{"fake.one", "fake.two", "fake.off", "fake.three"}) // appended in order

	// The new connection's session opens at once and its catalog is stored.
	snap := poll.Value(t, "the catalog of the new connection stored", patience, func() (catalog.Snapshot, bool) {
		snap, err := s.store.GetCatalog(ctx(t), "fake.three")
		return snap, err == nil
	})
	is.Equal(len(snap.Tools), 7)
	is.Equal(len(w.madeFor("fake.three")), 1)
	is.Equal(s.mustCall(t, "fake.three", "counter", nil)["count"], 1.0) // calls reach it, on that session
	is.Equal(len(w.madeFor("fake.three")), 1)
	is.Equal(len(w.madeFor("fake.one")), 0) // nothing else was started
}

func TestReconcileRemovesAConnectionClosingItsSession(t *testing.T) {
	is := is.New(t)
	s, obs, w := observed(t, testOptions())
	s.mustCall(t, "fake.one", "counter", nil)
	s.mustCall(t, "fake.two", "counter", nil)

	r := s.reconcile(t, without(conns(), "fake.one"))
	is.Equal(r.Removed, []string{"fake.one"})
	is.Equal(r.Stopped, []string{"fake.one"})
	is.Equal(len(r.Registered)+len(r.Updated), 0)
	// By the time the reconcile answers, the session is closed and its
	// transport killed (a stdio server's process group ended).
	is.Equal(obs.Closed(), 1)
	is.Equal(w.kills.Load(), int64(1))
	is.Equal(s.engine.Registry.GetPID("supervisor/mcp/session", "fake.one"), nil)

	res := s.call(t, "fake.one", "counter", nil)
	is.True(res.Error.Err() != nil)
	is.True(strings.Contains(res.Error.Err().Error(), `unknown connection "fake.one"`))
	is.Equal(statusIDs(t, s), []string{"fake.two", "fake.off"})
	is.Equal(s.mustCall(t, "fake.two", "counter", nil)["count"], 2.0) // the others keep their sessions
}

func TestReconcileDisablesAConnectionClosingItsSession(t *testing.T) {
	is := is.New(t)
	s, obs, _ := observed(t, testOptions())
	s.mustCall(t, "fake.two", "counter", nil)

	r := s.reconcile(t, changed(conns(), "fake.two", func(c *config.Connection) { c.Enabled = enabled(false) }))
	is.Equal(r.Updated, []string{"fake.two"})
	is.Equal(r.Stopped, []string{"fake.two"})
	is.Equal(len(r.Replaced), 0)
	is.Equal(obs.Closed(), 1)
	res := s.call(t, "fake.two", "counter", nil)
	is.True(res.Error.Err() != nil)
	is.True(strings.Contains(res.Error.Err().Error(), "disabled"))
	is.Equal(s.status(t, "fake.two").State, session.StateClosed)

	// Enabled again, it gets a fresh session.
	r = s.reconcile(t, conns())
	is.Equal(r.Updated, []string{"fake.two"})
	is.Equal(len(r.Stopped), 0)
	is.Equal(s.mustCall(t, "fake.two", "counter", nil)["count"], 1.0)
}

func TestReconcileGivesAChangedConnectionAFreshSession(t *testing.T) {
	is := is.New(t)
	s, obs, w := observed(t, testOptions())
	is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"], 1.0)
	is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"], 2.0)

	withEnv := changed(conns(), "fake.one", func(c *config.Connection) { c.Transport.Env = map[string]string{"MODE": "new"} })
	r := s.reconcile(t, withEnv)
	is.Equal(r.Updated, []string{"fake.one"})
	is.Equal(r.Replaced, []string{"fake.one"})
	is.Equal(r.Stopped, []string{"fake.one"})
	is.Equal(obs.Closed(), 1) // the old session is closed

	is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"], 1.0) // a fresh upstream
	made := w.madeFor("fake.one")
	is.Equal(len(made), 2)
	is.Equal(made[1].Transport.Env["MODE"], "new") // built from the new definition
	is.Equal(s.status(t, "fake.one").State, session.StateOpen)
}

func TestReconcileKeepsTheSessionWhenOnlyMetadataChanges(t *testing.T) {
	is := is.New(t)
	s, obs, w := observed(t, testOptions())
	s.mustCall(t, "fake.one", "counter", nil)

	r := s.reconcile(t, changed(conns(), "fake.one", func(c *config.Connection) { c.Metadata = map[string]any{"team": "b"} }))
	is.Equal(r.Updated, []string{"fake.one"}) // reported as updated
	is.Equal(len(r.Replaced)+len(r.Stopped), 0)
	is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"], 2.0) // on the same session

	r = s.reconcile(t, changed(conns(), "fake.one", func(c *config.Connection) { c.Metadata = map[string]any{"team": "b"} }))
	is.Equal(len(r.Registered)+len(r.Updated)+len(r.Removed), 0) // the same set changes nothing
	is.Equal(obs.Closed(), 0)
	is.Equal(len(w.madeFor("fake.one")), 1)
}

func TestReconcileReplacesTheSessionWhenTheAuthRecordChanges(t *testing.T) {
	is := is.New(t)
	var (
		mu    sync.Mutex
		auths = map[string]string{"creds.one": "v1"}
	)
	opts := testOptions()
	opts.AuthHash = func(_ context.Context, cs []config.Connection) map[string]string {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]string{}
		for _, c := range cs {
			if c.AuthRef != nil {
				out[c.ID] = auths[*c.AuthRef]
			}
		}
		return out
	}
	ref := "creds.one"
	withRef := changed(conns(), "fake.one", func(c *config.Connection) { c.AuthRef = &ref })
	w := &witness{inner: fakes.NewInMemory(nil)}
	e := startWith(t, w, store.NewMemory(), opts)
	r := e.reconcile(t, withRef) // auth_ref set: a new fingerprint
	is.Equal(r.Replaced, []string{"fake.one"})
	is.Equal(e.mustCall(t, "fake.one", "counter", nil)["count"], 1.0)

	r = e.reconcile(t, withRef)
	is.Equal(len(r.Updated), 0) // the same record: nothing to do
	is.Equal(e.mustCall(t, "fake.one", "counter", nil)["count"], 2.0)

	mu.Lock()
	auths["creds.one"] = "v2"
	mu.Unlock()
	r = e.reconcile(t, withRef)
	is.Equal(r.Replaced, []string{"fake.one"})
	is.Equal(r.Stopped, []string{"fake.one"})
	is.Equal(e.mustCall(t, "fake.one", "counter", nil)["count"], 1.0) // a fresh session
}

// refusesFirst is a transport factory whose first connect fails, as an
// upstream that was down a moment would.
type refusesFirst struct {
	session.TransportFactory
	refused atomic.Bool
}

func (r *refusesFirst) NewTransport(c config.Connection) (mcp.Transport, error) {
	if r.refused.CompareAndSwap(false, true) {
		return nil, errors.New("upstream down a moment")
	}
	return r.TransportFactory.NewTransport(c)
}

func TestALastErrorOutlivesARecoveryAndNotAChangedDefinition(t *testing.T) {
	is := is.New(t)
	s := start(t, &refusesFirst{TransportFactory: fakes.NewInMemory(nil)}, testOptions())
	is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"], 1.0) // after a failed connect and a retry
	st := s.status(t, "fake.one")
	is.Equal(st.State, session.StateOpen)
	is.True(strings.Contains(st.LastError, "upstream down a moment")) // kept: what ended the last connect

	s.reconcile(t, changed(conns(), "fake.one", func(c *config.Connection) { c.Transport.Env = map[string]string{"MODE": "new"} }))
	is.Equal(s.status(t, "fake.one").LastError, "") // the old definition's error is gone
	is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"], 1.0)
	st = s.status(t, "fake.one")
	is.Equal(st.LastError, "") // and the new session does not bring it back
	is.True(st.LastErrorAt.IsZero())
}

func TestReconcileOfARemovedIDThatComesBackSpawnsAFreshSession(t *testing.T) {
	is := is.New(t)
	s, _, _ := observed(t, testOptions())
	s.mustCall(t, "fake.one", "counter", nil)
	s.reconcile(t, without(conns(), "fake.one"))
	r := s.reconcile(t, conns())
	is.Equal(r.Registered, []string{"fake.one"})
	is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"], 1.0)
	is.Equal(s.status(t, "fake.one").State, session.StateOpen)
}

func TestFingerprintCoversTheSessionAndNothingElse(t *testing.T) {
	is := is.New(t)
	base := config.Connection{Kind: "mcp", ID: "a.b", Transport: config.Transport{Kind: "stdio", Command: "x", Env: map[string]string{"K": "1"}}}
	fp := supervisor.Fingerprint(base, "")
	other := base
	other.Metadata, other.Enabled, other.Provider = map[string]any{"m": 1}, enabled(false), "p"
	is.Equal(supervisor.Fingerprint(other, ""), fp) // metadata, enabled, provider do not count
	for name, edit := range map[string]func(*config.Connection){
		"command":          func(c *config.Connection) { c.Transport.Command = "y" },
		"args":             func(c *config.Connection) { c.Transport.Args = []string{"-v"} },
		"env":              func(c *config.Connection) { c.Transport.Env = map[string]string{"K": "2"} },
		"headers":          func(c *config.Connection) { c.Transport.Headers = map[string]string{"H": "v"} },
		"auth":             func(c *config.Connection) { r := "r"; c.AuthRef = &r },
		"max_result_bytes": func(c *config.Connection) { c.MaxResultBytes = 1 << 20 },
	} {
		c := base
		c.Transport.Env = map[string]string{"K": "1"}
		edit(&c)
		if supervisor.Fingerprint(c, "") == fp {
			t.Logf("a change of %s keeps the fingerprint", name)
			is.Fail() // every session input changes the fingerprint
		}
	}
	is.True(supervisor.Fingerprint(base, "h") != fp) // the auth record's digest counts
}
