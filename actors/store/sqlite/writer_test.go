package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// The tests of the writer hold it inside a write (holdWriter) while they
// queue others, so that what a batch takes does not depend on timing.
// They run one at a time: TestCloseCommitsTheQueuedWrites counts
// goroutines.

// waitFor is how long a test waits for the writer to reach a state.
const waitFor = 10 * time.Second

// openTest opens the store at path with a batch that takes whatever is
// queued, however long it has run.
func openTest(t *testing.T, path string) *Store {
	is := is.New(t)
	s, err := Open(t.Context(), path, func(o *options) { o.batch.time = time.Hour })
	is.NoErr(err) // open the store
	return s
}

// holdWriter makes the writer run a write that waits until the returned
// release is called, and returns once the writer runs it; that write's
// outcome is then sent on the returned channel.
func holdWriter(t *testing.T, s *Store) (release func(), held <-chan error) {
	running, unblock, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- s.update(context.Background(), func(context.Context, writeTx) error {
			close(running)
			<-unblock
			return nil
		})
	}()
	select {
	case <-running:
	case <-time.After(waitFor):
		is.New(t).Fail() // the writer runs the holding write
	}
	return func() { close(unblock) }, done
}

// queue starts fn in a goroutine, waits until the writer's queue holds
// one more write, and returns the channel fn's error will be sent on.
func queue(t *testing.T, s *Store, fn func() error) <-chan error {
	n := len(s.writer.queue)
	errc := make(chan error, 1)
	go func() { errc <- fn() }()
	poll.For(t, "a write queued", waitFor, func() bool { return len(s.writer.queue) > n })
	return errc
}

// createWorkspace returns a call that creates workspace id.
func createWorkspace(s *Store, id string) func() error {
	return func() error { return s.CreateWorkspace(context.Background(), store.Workspace{ID: id, Revision: 1}) }
}

func TestConcurrentWritesShareCommits(t *testing.T) {
	is := is.New(t)
	s := openTest(t, filepath.Join(t.TempDir(), "mcpflow.db"))
	defer s.Close()
	release, held := holdWriter(t, s)
	before := s.WriteStats()
	const n = 20
	var results []<-chan error
	for i := range n {
		results = append(results, queue(t, s, createWorkspace(s, "ws-"+strconv.Itoa(i))))
	}
	release()
	is.NoErr(<-held)
	for _, errc := range results {
		is.NoErr(<-errc) // every write is acknowledged
	}
	after := s.WriteStats()
	is.Equal(after.Writes-before.Writes, uint64(n+1))
	is.Equal(after.Commits-before.Commits, uint64(1)) // the held write's batch took the 20 queued behind it: one commit
	list, err := s.ListWorkspaces(t.Context())
	is.NoErr(err)
	is.Equal(len(list), n) // and each is committed
}

func TestAFailingWriteFailsAlone(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := openTest(t, filepath.Join(t.TempDir(), "mcpflow.db"))
	defer s.Close()
	release, held := holdWriter(t, s)
	errBoom := errors.New("boom")
	first := queue(t, s, createWorkspace(s, "a"))
	partial := queue(t, s, func() error { // changes something, then fails
		return s.update(ctx, func(ctx context.Context, tx writeTx) error {
			if err := insertNew(ctx, tx, insertWorkspace, "partial", 1, `{"id":"partial"}`); err != nil {
				return err
			}
			return errBoom
		})
	})
	duplicate := queue(t, s, createWorkspace(s, "a"))
	last := queue(t, s, createWorkspace(s, "b"))
	release()
	is.NoErr(<-held)
	is.Equal(s.WriteStats(), WriteStats{Writes: 3, Commits: 1}) // one batch: the held write, a and b
	is.NoErr(<-first)
	is.True(errors.Is(<-partial, errBoom))           // the failing write reports its own error
	is.True(errors.Is(<-duplicate, store.ErrExists)) // and so does a conflicting one
	is.NoErr(<-last)                                 // the writes after them commit
	for id, want := range map[string]error{"a": nil, "b": nil, "partial": store.ErrNotFound} {
		_, err := s.GetWorkspace(ctx, id)
		is.True(errors.Is(err, want)) // only the failed writes' changes are rolled back
	}
}

// The first write of a batch runs without a savepoint: when it fails, its
// transaction is rolled back whole, and the next write commits in another.
func TestAFailingFirstWriteIsRolledBackWithItsTransaction(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := openTest(t, filepath.Join(t.TempDir(), "mcpflow.db"))
	defer s.Close()
	errBoom := errors.New("boom")
	err := s.update(ctx, func(ctx context.Context, tx writeTx) error { // changes something, then fails
		if err := insertNew(ctx, tx, insertWorkspace, "partial", 1, `{"id":"partial"}`); err != nil {
			return err
		}
		return errBoom
	})
	is.True(errors.Is(err, errBoom)) // the write reports its own error
	is.NoErr(createWorkspace(s, "after")())
	_, err = s.GetWorkspace(ctx, "partial")
	is.True(errors.Is(err, store.ErrNotFound)) // its change was rolled back
	_, err = s.GetWorkspace(ctx, "after")
	is.NoErr(err)                                               // the next write committed
	is.Equal(s.WriteStats(), WriteStats{Writes: 1, Commits: 1}) // in a transaction of its own
}

func TestAWriteCancelledWhileQueuedIsDropped(t *testing.T) {
	is := is.New(t)
	s := openTest(t, filepath.Join(t.TempDir(), "mcpflow.db"))
	defer s.Close()
	release, held := holdWriter(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	dropped := queue(t, s, func() error {
		return s.CreateWorkspace(ctx, store.Workspace{ID: "dropped", Revision: 1})
	})
	cancel()
	is.True(errors.Is(<-dropped, context.Canceled)) // the caller returns at once, the writer still held
	release()
	is.NoErr(<-held)
	is.NoErr(createWorkspace(s, "after")()) // the writer has passed the dropped write
	_, err := s.GetWorkspace(t.Context(), "dropped")
	is.True(errors.Is(err, store.ErrNotFound)) // which never ran
	is.Equal(s.WriteStats().Writes, uint64(2)) // the held write and the last
}

func TestCloseCommitsTheQueuedWrites(t *testing.T) {
	is := is.New(t)
	goroutines := runtime.NumGoroutine()
	path := filepath.Join(t.TempDir(), "mcpflow.db")
	s := openTest(t, path)
	release, held := holdWriter(t, s)
	const n = 5
	var queued []<-chan error
	for i := range n {
		queued = append(queued, queue(t, s, createWorkspace(s, "ws-"+strconv.Itoa(i))))
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	poll.For(t, "the store closing", waitFor, func() bool {
		select {
		case <-s.writer.closing:
			return true
		default:
			return false
		}
	})
	is.True(errors.Is(createWorkspace(s, "late")(), ErrClosed)) // a write after Close fails at once
	release()
	is.NoErr(<-held)
	is.NoErr(<-closed)
	for _, errc := range queued {
		is.NoErr(<-errc) // writes queued before Close are committed
	}
	poll.For(t, "back to the goroutines before Open", waitFor, func() bool { return runtime.NumGoroutine() <= goroutines })

	s = openTest(t, path)
	defer s.Close()
	list, err := s.ListWorkspaces(t.Context())
	is.NoErr(err)
	is.Equal(len(list), n) // every acknowledged write is in the file
}

func TestSyncLevels(t *testing.T) {
	for level, want := range map[Sync]int{"": 2, SyncFull: 2, SyncNormal: 1} {
		t.Run(string(level), func(t *testing.T) {
			is := is.New(t)
			s, err := Open(t.Context(), filepath.Join(t.TempDir(), "mcpflow.db"), WithSync(level))
			is.NoErr(err)
			defer s.Close()
			var synchronous int
			is.NoErr(s.writeConn.QueryRowContext(t.Context(), "PRAGMA synchronous").Scan(&synchronous)) // the writer is idle
			is.Equal(synchronous, want)                                                                 // FULL is 2, NORMAL 1
		})
	}
}

func TestOpenRefusesAnUnknownSyncLevel(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "mcpflow.db")
	_, err := Open(t.Context(), path, WithSync("off"))
	is.True(err != nil)
	is.Equal(err.Error(), `open store "`+path+`": sync level must be "full" or "normal", got "off"`)
}
