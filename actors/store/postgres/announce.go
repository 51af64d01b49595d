package postgres

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Bounds of an announcer.
const (
	// announceQueue is how many announcements may wait to be sent; past
	// it they are dropped and a resync is sent instead.
	announceQueue = 4096
	// announceBatch is the most announcements sent in one statement.
	announceBatch = 512
	// announceTimeout bounds each send, and the last one as the store
	// closes.
	announceTimeout = 5 * time.Second
)

// announceSQL sends one batch of announcements on EventsChannel, in a
// transaction of its own whose commit waits for no flush: a NOTIFY holds a
// lock shared by the whole server from its transaction's commit until the
// commit is durable, so sent from the commits of runs it would make every
// commit wait for the one before (twice as slow at 16 connections, with
// triggers). Announcements carry nothing that must survive a crash.
const announceSQL = `SELECT set_config('synchronous_commit', 'off', true),
	pg_notify('` + EventsChannel + `', p) FROM unnest($1::text[]) AS p`

// announcer tells the other nodes of a cluster, once each commit has
// returned, what it appended or changed (the payloads Listener reads):
// `run <seq> <id>`, `admin <seq>`, and `<kind> <id>` for the changes that
// nodes cache (Change*). A node that dies
// between a commit and its announcement leaves the other nodes'
// followers of that log to learn of it with its next announcement, or
// their listener's next resync. Announcements are queued without
// blocking and sent by one goroutine, many to a statement; one that does
// not fit in the queue is replaced by a resync.
type announcer struct {
	pool   *pgxpool.Pool
	queue  chan string
	wake   chan struct{} // one pending wake is enough
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	dropped bool // announcements were dropped: a resync is owed
}

// newAnnouncer starts the announcer of pool; stop ends it.
func newAnnouncer(pool *pgxpool.Pool) *announcer {
	ctx, cancel := context.WithCancel(context.Background())
	a := &announcer{pool: pool, queue: make(chan string, announceQueue), wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go a.loop(ctx)
	return a
}

// loop sends what is queued until ctx ends, then what is left.
func (a *announcer) loop(ctx context.Context) {
	defer close(a.done)
	for {
		select {
		case p := <-a.queue:
			a.send(ctx, p)
		case <-a.wake:
			a.send(ctx, "")
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.Background(), announceTimeout)
			a.send(last, "")
			cancel()
			return
		}
	}
}

// send sends first (unless empty) and whatever else is queued, a batch at
// a time, with the resync owed if announcements were dropped.
func (a *announcer) send(ctx context.Context, first string) {
	for {
		batch := make([]string, 0, 16)
		if first != "" {
			batch = append(batch, first)
			first = ""
		}
	fill:
		for len(batch) < announceBatch {
			select {
			case p := <-a.queue:
				batch = append(batch, p)
			default:
				break fill
			}
		}
		a.mu.Lock()
		if a.dropped {
			batch, a.dropped = append(batch, "resync"), false
		}
		a.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, announceTimeout)
		_, err := a.pool.Exec(sctx, announceSQL, batch)
		cancel()
		if err != nil {
			slog.Warn("cluster announcements not sent; the other nodes learn of these changes later", "count", len(batch), "err", err)
			a.drop()
			return
		}
		if len(batch) < announceBatch {
			return
		}
	}
}

// say queues an announcement without blocking.
func (a *announcer) say(payload string) {
	if a == nil {
		return
	}
	select {
	case a.queue <- payload:
	default:
		a.drop()
	}
}

// drop owes a resync for announcements that were not sent, and wakes the
// loop to send it.
func (a *announcer) drop() {
	a.mu.Lock()
	a.dropped = true
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// runEvents announces run id's events up to seq, adminEvents the admin
// events up to seq, and change a change of kind (Change*) to the record
// id ("" for none). A store of one node alone has no announcer: they do
// nothing, not even build the payload.
func (a *announcer) runEvents(id string, seq int64) {
	if a != nil {
		a.naming("run "+strconv.FormatInt(seq, 10), id)
	}
}

func (a *announcer) adminEvents(seq int64) {
	if a != nil && seq > 0 {
		a.say("admin " + strconv.FormatInt(seq, 10))
	}
}

func (a *announcer) change(kind, id string) {
	if a != nil {
		a.naming(kind, id)
	}
}

// naming queues prefix followed by id ("" for none), or a resync for an
// id longer than a payload may name (8000 bytes in all).
func (a *announcer) naming(prefix, id string) {
	switch {
	case len(id) > maxAnnouncedID:
		a.say("resync")
	case id == "":
		a.say(prefix)
	default:
		a.say(prefix + " " + id)
	}
}

// maxAnnouncedID is the longest id a payload names; longer ones are
// announced as a resync.
const maxAnnouncedID = 7000

// stop sends what is queued, within announceTimeout, and ends the
// announcer.
func (a *announcer) stop() {
	if a == nil {
		return
	}
	a.cancel()
	<-a.done
}
