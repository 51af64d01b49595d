package membership_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/membership"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestProviderOnTwoNodes runs two hollywood clusters in this process,
// each with a remote on a loopback port and the provider on one database:
// each sees the other join, and sees it leave once its node lease ends.
func TestProviderOnTwoNodes(t *testing.T) {
	srv := pgtest.Start(t)
	t.Run("Registered", func(t *testing.T) { testRegisteredMembers(t, srv) })
	t.Run("Static", func(t *testing.T) { testStaticMembers(t, srv) })
}

// testRegisteredMembers: the nodes register and hold their node leases
// with a keeper; one releases its lease, and leaves, then takes it again,
// and joins again.
func testRegisteredMembers(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	table, reg := openDatabase(t, srv)
	addrA, addrB := freeAddress(t), freeAddress(t)
	keeperB := runKeeper(t, table, "node-b")
	for id, addr := range map[string]string{"node-a": addrA, "node-b": addrB} {
		is.NoErr(reg.Register(ctx, membership.Member{NodeID: id, ClusterAddress: addr}))
	}
	_, err := runKeeper(t, table, "node-a").Acquire(ctx, membership.NodeKey("node-a"))
	is.NoErr(err)
	_, err = keeperB.Acquire(ctx, membership.NodeKey("node-b"))
	is.NoErr(err)

	m := metrics.New()
	a := startNode(t, "node-a", remoteEngine(t, addrA), membership.Registered(reg), membership.ProviderOptions{Metrics: m})
	b := startNode(t, "node-b", remoteEngine(t, addrB), membership.Registered(reg), membership.ProviderOptions{})
	self := a.await(t, true, "node-a")
	is.Equal(self.Host, addrA) // itself, at once
	joined := a.await(t, true, "node-b")
	is.Equal(joined.Host, addrB)             // at its registered address
	is.Equal(joined.Kinds, []string{"echo"}) // with the node's kinds
	is.Equal(joined.Region, "test")          // and region
	is.Equal(b.await(t, true, "node-a").Host, addrA)
	is.Equal(a.memberIDs(), []string{"node-a", "node-b"})
	members, _ := metricstest.Gather(t, m.Registry()).Value("mcpflow_cluster_members")
	is.Equal(members, 2.0) // what the metrics say

	is.NoErr(keeperB.Release(ctx, membership.NodeKey("node-b")))
	is.Equal(a.await(t, false, "node-b").Host, addrB) // it left
	is.Equal(a.memberIDs(), []string{"node-a"})

	_, err = keeperB.Acquire(ctx, membership.NodeKey("node-b"))
	is.NoErr(err)
	a.await(t, true, "node-b") // and came back
}

// testStaticMembers: the members are configured, and need not register;
// one's node lease expires, unrenewed, and it leaves. A node that holds a
// node lease but is not configured never joins.
func testStaticMembers(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	table, reg := openDatabase(t, srv)
	addrA, addrB := freeAddress(t), freeAddress(t)
	configured := []membership.Member{{NodeID: "node-a", ClusterAddress: addrA}, {NodeID: "node-b", ClusterAddress: addrB}}
	_, err := table.Acquire(ctx, membership.NodeKey("node-a"), "node-a", time.Minute)
	is.NoErr(err)
	_, err = table.Acquire(ctx, membership.NodeKey("node-z"), "node-z", time.Minute)
	is.NoErr(err)
	b, err := table.Acquire(ctx, membership.NodeKey("node-b"), "node-b", 3*time.Second)
	is.NoErr(err)

	a := startNode(t, "node-a", remoteEngine(t, addrA), membership.Static(reg, configured), membership.ProviderOptions{})
	startNode(t, "node-b", remoteEngine(t, addrB), membership.Static(reg, configured), membership.ProviderOptions{})
	is.Equal(a.await(t, true, "node-b").Host, addrB) // at its configured address
	is.Equal(a.memberIDs(), []string{"node-a", "node-b"})

	left := a.await(t, false, "node-b") // its lease expired
	is.Equal(left.Host, addrB)
	s, err := table.Get(ctx, membership.NodeKey("node-b"))
	is.NoErr(err)
	is.True(!s.Live && s.Epoch == b.Epoch)      // not renewed, not taken
	is.Equal(a.memberIDs(), []string{"node-a"}) // node-z, live all along, is not configured
}

// TestProviderKeepsTheLastSetThroughAnOutage fails the source's reads for
// a while: the members stay, the outage is logged once, and the next read
// that succeeds is the member set again.
func TestProviderKeepsTheLastSetThroughAnOutage(t *testing.T) {
	is := is.New(t)
	src := &scriptedSource{answer: []membership.Member{{NodeID: "node-b", ClusterAddress: "10.0.0.2:7000"}}}
	logs := &recordedLogs{}
	a := startNode(t, "node-a", localEngine(t), src, membership.ProviderOptions{Logger: slog.New(logs)})
	a.await(t, true, "node-b")

	calls := src.failFor(errors.New("connection refused"))
	poll.For(t, "three failed reads", waitFor, func() bool { return src.calls() >= calls+3 })
	is.Equal(a.memberIDs(), []string{"node-a", "node-b"}) // the last set stands
	is.Equal(logs.count(slog.LevelWarn), 1)               // one outage, one warning

	src.set(nil, nil) // node-b's lease ended meanwhile
	a.await(t, false, "node-b")
	is.Equal(logs.count(slog.LevelInfo), 1) // the end of the outage
	is.Equal(logs.count(slog.LevelWarn), 1)
}

// TestProviderSurvivesASourceThatPanics: a read that panics is a read that
// failed.
func TestProviderSurvivesASourceThatPanics(t *testing.T) {
	is := is.New(t)
	src := &scriptedSource{answer: []membership.Member{{NodeID: "node-b", ClusterAddress: "10.0.0.2:7000"}}}
	logs := &recordedLogs{}
	a := startNode(t, "node-a", localEngine(t), src, membership.ProviderOptions{Logger: slog.New(logs)})
	a.await(t, true, "node-b")
	calls := src.panicNow()
	poll.For(t, "two reads that panicked", waitFor, func() bool { return src.calls() >= calls+2 })
	is.Equal(a.memberIDs(), []string{"node-a", "node-b"}) // the last set stands
	is.Equal(logs.count(slog.LevelWarn), 1)               // logged as an outage
	src.set(nil, nil)
	a.await(t, false, "node-b") // and the provider goes on
}

// TestProviderReadsOneAtATimeOffTheActor gives the provider a source that
// answers only when its deadline passes: one read at a time, each within
// the timeout; as the node stops, the read in
// flight is cancelled and waited for.
func TestProviderReadsOneAtATimeOffTheActor(t *testing.T) {
	is := is.New(t)
	src := &scriptedSource{hang: true}
	c := startNode(t, "node-a", localEngine(t), src, membership.ProviderOptions{Timeout: 4 * interval}).cluster
	poll.For(t, "three reads", waitFor, func() bool { return src.calls() >= 3 })
	within(t, "the node stops", c.Stop)
	is.Equal(src.maxActive(), 1) // never two reads at once
	is.Equal(src.active(), 0)    // none left as it stopped
	is.True(src.allBounded())    // each had a deadline
	is.True(src.calls() >= 3)
}

// localEngine is an engine without a remote; its actors are stopped with
// the test's nodes.
func localEngine(t *testing.T) *actor.Engine {
	t.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// scriptedSource answers what the test sets, and counts its reads.
type scriptedSource struct {
	mu      sync.Mutex
	answer  []membership.Member
	err     error
	hang    bool // answer when the read's deadline passes, with its error
	panics  bool // panic instead of answering
	n       int  // reads begun
	now     int  // reads in flight
	most    int  // the most reads ever in flight at once
	unbound bool // a read came without a deadline
}

func (s *scriptedSource) LiveMembers(ctx context.Context) ([]membership.Member, error) {
	s.mu.Lock()
	s.n++
	s.now++
	s.most = max(s.most, s.now)
	_, bounded := ctx.Deadline()
	s.unbound = s.unbound || !bounded
	answer, err, hang, panics := s.answer, s.err, s.hang, s.panics
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.now--
		s.mu.Unlock()
	}()
	switch {
	case panics:
		panic("a bug in the source")
	case hang:
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return answer, err
}

// set makes the next reads answer members and err.
func (s *scriptedSource) set(members []membership.Member, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer, s.err, s.panics = members, err, false
}

// panicNow makes the next reads panic, and returns the reads begun so far.
func (s *scriptedSource) panicNow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.panics = true
	return s.n
}

// failFor makes the next reads fail with err, and returns the reads begun
// so far.
func (s *scriptedSource) failFor(err error) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
	return s.n
}

func (s *scriptedSource) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *scriptedSource) active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

func (s *scriptedSource) maxActive() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.most
}

func (s *scriptedSource) allBounded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.unbound
}

// recordedLogs is a slog handler that counts the records of each level.
type recordedLogs struct {
	mu     sync.Mutex
	levels map[slog.Level]int
}

func (h *recordedLogs) Enabled(context.Context, slog.Level) bool { return true }

func (h *recordedLogs) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.levels == nil {
		h.levels = map[slog.Level]int{}
	}
	h.levels[r.Level]++
	return nil
}

func (h *recordedLogs) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordedLogs) WithGroup(string) slog.Handler      { return h }

// count is how many records of level were logged.
func (h *recordedLogs) count(level slog.Level) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.levels[level]
}
