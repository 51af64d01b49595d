package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// queueSize is how many writes may wait for the writer; more callers wait
// to queue, each until its ctx ends.
const queueSize = 256

// batchLimits bound a batch.
type batchLimits struct {
	// writes is how many writes one transaction takes at most.
	writes int
	// time is how long after its start a batch still takes queued
	// writes: it bounds the wait of its first write.
	time time.Duration
}

// defaultBatchLimits are the limits of every Store (tests open theirs with
// others).
var defaultBatchLimits = batchLimits{writes: 64, time: 5 * time.Millisecond}

// ErrClosed is the error of a write made after Close.
var ErrClosed = errors.New("store is closed")

// writeFn is one store method's changes. It runs in the writer's
// transaction, with the writer's ctx and not the caller's: interrupting a
// statement in a transaction would roll back the whole batch. That ctx is
// never cancelled (which also spares the driver a watcher goroutine per
// statement): each statement's wait for a lock is bounded by
// busyTimeoutMs instead. It must not call the Store.
type writeFn func(ctx context.Context, tx writeTx) error

// A write is one caller's writeFn on its way through the writer. Exactly
// one side moves it out of queued: the writer when it takes it (or drops
// it, its ctx done), the caller when its ctx ends or the writer has
// stopped. Whoever does so owes the caller its outcome.
type write struct {
	ctx   context.Context // the caller's: a write whose ctx is done is not taken
	fn    writeFn
	state atomic.Int32 // queued, taken or dropped
	done  chan error   // do's, buffered: the writer's report, sent once
	then  func(error)  // submit's, in place of done: called with the report
}

// The states of a write.
const (
	queued int32 = iota
	taken
	dropped
)

// leave moves w out of queued into state, and reports whether this call
// did so.
func (w *write) leave(state int32) bool { return w.state.CompareAndSwap(queued, state) }

// report gives w's caller its outcome, once.
func (w *write) report(err error) {
	if w.then != nil {
		w.then(err)
		return
	}
	w.done <- err
}

// writer is the one goroutine that writes to the database, committing the
// writes queued to it in batches (see Store).
type writer struct {
	tx     writeTx // the statements on the writer's connection
	limits batchLimits
	heads  runHeads // the heads of the runs it wrote, dropped at every rollback

	queue     chan *write
	closeMu   sync.RWMutex  // held to queue a submitted write, locked to close closing
	closing   chan struct{} // closed by close: no more writes are queued
	stopped   chan struct{} // closed when run returns
	closeOnce sync.Once

	writes, commits atomic.Uint64 // see WriteStats
	written         atomic.Uint64 // see Store.BytesWritten
}

// startWriter starts the writer whose write queries are stmts, prepared
// on the connection it owns.
func startWriter(stmts []*sql.Stmt, limits batchLimits) *writer {
	w := &writer{
		limits:  limits,
		queue:   make(chan *write, queueSize),
		closing: make(chan struct{}),
		stopped: make(chan struct{}),
	}
	w.tx = writeTx{stmts: stmts, written: &w.written}
	go w.run()
	return w
}

// do queues fn and returns its outcome once its batch has committed (and,
// with sync full, synced) or failed. If ctx ends before the writer takes
// fn, fn is dropped and never runs; once taken, fn is committed or failed
// as a whole, which the batch bounds keep short, and do reports which.
func (w *writer) do(ctx context.Context, fn writeFn) error {
	select {
	case <-w.closing:
		return ErrClosed
	default:
	}
	wr := &write{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case w.queue <- wr:
	case <-ctx.Done():
		return ctx.Err()
	case <-w.closing:
		return ErrClosed
	}
	select {
	case err := <-wr.done:
		return err
	case <-ctx.Done():
		if wr.leave(dropped) {
			return ctx.Err()
		}
	case <-w.stopped: // queued as the writer stopped
		if wr.leave(dropped) {
			return ErrClosed
		}
	}
	return <-wr.done // the writer has it: its batch reports
}

// submit queues fn as do does, but returns at once: then is called
// once, from the writer, with what do would return. Nothing waits for
// it meanwhile, so a write whose ctx ends while queued is dropped when
// the writer comes to it, not before. With the queue full, a goroutine
// that lives for the write waits for room, as do's caller would.
func (w *writer) submit(ctx context.Context, fn writeFn, then func(error)) {
	wr := &write{ctx: ctx, fn: fn, then: then}
	w.closeMu.RLock()
	select {
	case <-w.closing:
		w.closeMu.RUnlock()
		then(ErrClosed)
		return
	default:
	}
	select {
	case w.queue <- wr:
		w.closeMu.RUnlock()
		return
	default:
		w.closeMu.RUnlock()
	}
	go func() { then(w.do(ctx, fn)) }()
}

// close stops queuing writes, lets the writer commit those already queued,
// and waits until it has stopped. Writes queued after its last look fail
// with ErrClosed; a submitted write is queued before it, or not at all.
func (w *writer) close() {
	w.closeOnce.Do(func() {
		w.closeMu.Lock()
		close(w.closing)
		w.closeMu.Unlock()
	})
	<-w.stopped
}

// run commits batches until close, then the writes still queued.
func (w *writer) run() {
	defer close(w.stopped)
	for {
		select {
		case wr := <-w.queue:
			w.batch(wr)
		case <-w.closing:
			for {
				select {
				case wr := <-w.queue:
					w.batch(wr)
				default:
					return
				}
			}
		}
	}
}

// batch runs first, then the writes queued behind it while the bounds
// allow, in one transaction, each after the first in its own savepoint;
// it commits once
// and only then reports to each write its outcome. The writer owns its
// connection, so it begins and ends the transaction with statements of
// its own rather than through a *sql.Tx, which would wrap each statement
// anew for every use.
func (w *writer) batch(first *write) {
	ctx := context.Background() // see writeFn
	b := &batch{start: time.Now()}
	for wr := first; wr != nil; wr = w.next(b) {
		if !take(wr) {
			continue
		}
		if !b.begun {
			if _, err := w.tx.exec(ctx, beginTx); err != nil {
				wr.report(fmt.Errorf("begin write transaction: %w", err))
				return
			}
			b.begun = true
			// The first write needs no savepoint (two statements fewer
			// per commit, every commit when runs come one at a time):
			// should it fail, the transaction holds nothing else, and is
			// rolled back whole; the next write begins another.
			err := wr.fn(ctx, w.tx)
			b.add(wr, err)
			if err != nil {
				if rbErr := w.rollback(ctx); rbErr != nil {
					b.report(fmt.Errorf("write transaction: %w", rbErr))
					return
				}
				b.begun = false
			}
			continue
		}
		own, fatal := w.inSavepoint(ctx, wr.fn)
		b.add(wr, own)
		if fatal != nil {
			b.report(errors.Join(fmt.Errorf("write transaction: %w", fatal), w.rollback(ctx)))
			return
		}
	}
	if !b.begun {
		b.report(nil) // every write failed, or was dropped
		return
	}
	if _, err := w.tx.exec(ctx, commitTx); err != nil {
		b.report(errors.Join(fmt.Errorf("commit write transaction: %w", err), w.rollback(ctx)))
		return
	}
	w.commits.Add(1)
	w.writes.Add(uint64(b.ok))
	b.report(nil)
}

// next is the next queued write for b, or nil when b is full or none is
// queued.
func (w *writer) next(b *batch) *write {
	if len(b.writes) >= w.limits.writes || time.Since(b.start) >= w.limits.time {
		return nil
	}
	select {
	case wr := <-w.queue:
		return wr
	default:
		return nil
	}
}

// take claims wr for a batch, unless its caller has dropped it or its ctx
// is done; the writer reports that ctx's error itself when the caller has
// not yet.
func take(wr *write) bool {
	if err := wr.ctx.Err(); err != nil {
		if wr.leave(dropped) {
			wr.report(err)
		}
		return false
	}
	return wr.leave(taken)
}

// inSavepoint runs fn in a savepoint of the writer's transaction: if fn
// fails, only its changes are rolled back, and the head cache, which may
// hold them, is dropped. own is fn's outcome; fatal is non-nil when the
// transaction can not go on (a savepoint statement failed, as after an
// error that made SQLite roll back the whole transaction).
func (w *writer) inSavepoint(ctx context.Context, fn writeFn) (own, fatal error) {
	tx := w.tx
	if _, err := tx.exec(ctx, savepoint); err != nil {
		return err, err
	}
	if err := fn(ctx, tx); err != nil {
		w.heads.drop()
		if _, rbErr := tx.exec(ctx, rollbackToSavepoint); rbErr != nil {
			return err, rbErr
		}
		_, relErr := tx.exec(ctx, releaseSavepoint)
		return err, relErr
	}
	_, err := tx.exec(ctx, releaseSavepoint)
	return err, err
}

// rollback ends the batch's transaction without committing it. After an
// error that made SQLite roll the transaction back already, it fails with
// "no transaction is active", which the caller reports with that error.
func (w *writer) rollback(ctx context.Context) error {
	w.heads.drop()
	if _, err := w.tx.exec(ctx, rollbackTx); err != nil {
		return fmt.Errorf("roll back write transaction: %w", err)
	}
	return nil
}

// The statements that begin and end a batch's transaction, and the
// savepoint every write runs in. BEGIN IMMEDIATE takes the write lock at
// once. ROLLBACK TO keeps the savepoint open: RELEASE follows it.
var (
	beginTx             = newWriteQuery(`BEGIN IMMEDIATE`)
	commitTx            = newWriteQuery(`COMMIT`)
	rollbackTx          = newWriteQuery(`ROLLBACK`)
	savepoint           = newWriteQuery(`SAVEPOINT write`)
	rollbackToSavepoint = newWriteQuery(`ROLLBACK TO write`)
	releaseSavepoint    = newWriteQuery(`RELEASE write`)
)

// batch is the writes one transaction has taken.
type batch struct {
	start  time.Time
	begun  bool // the transaction has begun
	writes []*write
	errs   []error // errs[i] is writes[i]'s own outcome
	ok     int     // writes whose own outcome is success
}

// add records that wr ran with outcome err.
func (b *batch) add(wr *write, err error) {
	b.writes = append(b.writes, wr)
	b.errs = append(b.errs, err)
	if err == nil {
		b.ok++
	}
}

// report tells each write its outcome: its own error if it failed, else
// err, the transaction's.
func (b *batch) report(err error) {
	for i, wr := range b.writes {
		wr.report(cmp.Or(b.errs[i], err))
	}
}

// WriteStats counts what the Store's writer has done since Open.
type WriteStats struct {
	// Writes is how many writes (store method calls) were committed.
	Writes uint64
	// Commits is how many transactions were committed. With sync full,
	// each is one sync of the write-ahead log, so Writes/Commits is how
	// many writes shared each.
	Commits uint64
}

// WriteStats reports the writer's counts, for tests and metrics.
func (s *Store) WriteStats() WriteStats {
	if s.writer == nil { // opened read-only
		return WriteStats{}
	}
	return WriteStats{Writes: s.writer.writes.Load(), Commits: s.writer.commits.Load()}
}

// BytesWritten is how many bytes of text and blob values the writer has
// handed to SQLite since Open, in the rows its statements wrote (records,
// trace entries, events): what a write costs the store before SQLite's
// own pages and log. For tests and benchmarks of what a commit writes.
func (s *Store) BytesWritten() uint64 { return s.writer.written.Load() }

// maxCachedHeads bounds the heads the writer keeps: past it, it forgets
// them all and reads each again at its run's next commit.
const maxCachedHeads = 4096

// runHeads is the writer's cache of the heads of the runs it has written
// that have not ended, as its transaction leaves them (store.RunHead and
// the sequence number of the run's last event): a commit reads its run's
// head here rather than from the run's row. Only the writer's goroutine
// touches it, inside its writes. It holds what a write changed before the
// write's batch commits, so the writer drops it whole whenever a write or
// a batch is rolled back; a write that finds no head reads the row. One
// process writes the file (its lock), so nothing else changes a head.
type runHeads struct {
	heads map[string]cachedHead
}

// cachedHead is one run's head and its last event's sequence number.
type cachedHead struct {
	head    store.RunHead
	lastSeq int64
	journal int64 // the seq of the run's last journal row, 0 for none
}

// get returns the head of run id, if cached.
func (c *runHeads) get(id string) (cachedHead, bool) {
	h, ok := c.heads[id]
	return h, ok
}

// put caches head, after whose commit the run's last event is lastSeq
// and its last journal row journal; a run that has ended is forgotten
// (no commit follows its end but a resume, which reads its row).
func (c *runHeads) put(head store.RunHead, lastSeq, journal int64) {
	if store.Terminal(head.Status) {
		delete(c.heads, head.ID)
		return
	}
	if c.heads == nil || len(c.heads) >= maxCachedHeads {
		c.heads = make(map[string]cachedHead)
	}
	c.heads[head.ID] = cachedHead{head: head, lastSeq: lastSeq, journal: journal}
}

// forget drops the head of run id.
func (c *runHeads) forget(id string) { delete(c.heads, id) }

// drop forgets every head: a write or a batch was rolled back, and what
// the cache holds may be what it undid.
func (c *runHeads) drop() { clear(c.heads) }
