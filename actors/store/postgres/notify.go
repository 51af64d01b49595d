package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/clock"
	"github.com/mcpflow/mcpflow/actors/store"
)

// EventsChannel is the channel on which the nodes of a cluster announce,
// after each commit (see announcer), every append to a run's event log or
// to the admin event log, and every change of what nodes cache.
const EventsChannel = "mcpflow_events"

// Kinds of the changes announced besides events: a connection's catalog
// (its id), the deployment and artifact records (no id), and the
// effective sources, which a node applied from the source registry (no
// id).
const (
	ChangeCatalog = "catalog"
	ChangeRecords = "records"
	ChangeSources = "sources"
)

// ChangeWaker is what a Waker may also be told: a change another node
// made to what this node caches (Change*; id "" for a kind without one).
type ChangeWaker interface {
	WakeChange(kind, id string)
}

// Waker is what a Listener tells of the events appended to the
// database, by any node: the same store.Observer that this node's own
// commits are told to (store.Observed), such as the live event hub
// (live.Hub). The listener calls its methods on its own goroutine, in the
// order the announcements arrive; they must not block. WakeRun and
// WakeAdmin carry the sequence number announced; WakeAll says that
// announcements may have been missed (the listener has just connected, or
// reconnected after losing its connection).
type Waker = store.Observer

// announce tells w of one payload (see announcer). One this build
// cannot read (a newer node's) wakes everything: slower, never wrong.
func announce(w Waker, payload string) {
	kind, rest, _ := strings.Cut(payload, " ")
	switch kind {
	case "admin":
		if seq, err := strconv.ParseInt(rest, 10, 64); err == nil {
			w.WakeAdmin(seq)
			return
		}
	case "run":
		n, id, _ := strings.Cut(rest, " ")
		if seq, err := strconv.ParseInt(n, 10, 64); err == nil && id != "" {
			w.WakeRun(id, seq)
			return
		}
	case ChangeCatalog, ChangeRecords, ChangeSources:
		if cw, ok := w.(ChangeWaker); ok {
			cw.WakeChange(kind, rest)
		}
		return
	}
	w.WakeAll()
}

// Defaults of ListenOptions.
const (
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 5 * time.Second
	DefaultIdleCheck  = 30 * time.Second
)

// Bounds of the listener's exchanges with the server.
const (
	listenConnectTimeout = 10 * time.Second // connecting and LISTEN
	listenPingTimeout    = 5 * time.Second  // the idle check's ping
	listenCloseTimeout   = 5 * time.Second  // closing the connection
)

// ListenOptions tune a Listener.
type ListenOptions struct {
	// MinBackoff and MaxBackoff bound the wait before reconnecting after
	// an error: it starts at MinBackoff, doubles with each failure in a
	// row up to MaxBackoff, and is drawn between half and all of that, so
	// that nodes cut off together do not all return at once.
	MinBackoff, MaxBackoff time.Duration
	// IdleCheck is how long the listener waits for a notification before
	// it pings the server, so that a connection silently gone (a network
	// partition) is noticed and replaced.
	IdleCheck time.Duration
	// Clock schedules the backoff and the idle check (clock.System when
	// nil).
	Clock clock.Clock
}

func (o ListenOptions) withDefaults() ListenOptions {
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(DefaultMaxBackoff, o.MinBackoff)
	}
	if o.IdleCheck <= 0 {
		o.IdleCheck = DefaultIdleCheck
	}
	if o.Clock == nil {
		o.Clock = clock.System()
	}
	return o
}

// Listener follows the announcements of the cluster's nodes on one
// connection of its own (outside the store's pool), which LISTENs on
// EventsChannel, and tells its Waker of each. After every connection (the
// first, and each reconnection after an error) it calls WakeAll, since
// PostgreSQL keeps no announcement for a listener that was not connected.
// Its goroutine ends with the context given to Listen.
type Listener struct {
	config *pgx.ConnConfig
	shown  string // the database, as logs may name it
	waker  Waker
	opts   ListenOptions
	done   chan struct{}
}

// Listen starts a Listener on the store's database that tells w of the
// events appended, until ctx ends.
func (s *Store) Listen(ctx context.Context, w Waker, opts ListenOptions) *Listener {
	config := s.pool.Config().ConnConfig
	l := &Listener{config: config, shown: showConfig(config), waker: w, opts: opts.withDefaults(), done: make(chan struct{})}
	go l.run(ctx)
	return l
}

// Done is closed once the listener's goroutine has returned and its
// connection is closed, after the context given to Listen ended.
func (l *Listener) Done() <-chan struct{} { return l.done }

// run connects, follows, and reconnects after a backoff, until ctx ends.
func (l *Listener) run(ctx context.Context) {
	defer close(l.done)
	backoff := l.opts.MinBackoff
	for {
		conn, err := l.connect(ctx)
		if err == nil {
			backoff = l.opts.MinBackoff // connected: the next failure starts over
			l.waker.WakeAll()
			err = l.follow(ctx, conn)
			l.close(ctx, conn)
		}
		if ctx.Err() != nil {
			return
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		slog.Warn("live event listener not connected", "database", l.shown, "err", err, "retry_in", wait)
		if !l.sleep(ctx, wait) {
			return
		}
		backoff = min(2*backoff, l.opts.MaxBackoff)
	}
}

// connect opens the listener's connection and LISTENs on EventsChannel.
func (l *Listener) connect(ctx context.Context) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, listenConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, l.config)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := conn.Exec(cctx, "LISTEN "+EventsChannel); err != nil {
		l.close(ctx, conn)
		return nil, fmt.Errorf("listen on %s: %w", EventsChannel, err)
	}
	return conn, nil
}

// follow announces each notification of conn to the waker until ctx ends
// or the connection fails; after IdleCheck without one, it pings.
func (l *Listener) follow(ctx context.Context, conn *pgx.Conn) error {
	for {
		wctx, cancel := context.WithCancel(ctx)
		idle := l.opts.Clock.AfterFunc(l.opts.IdleCheck, cancel)
		n, err := conn.WaitForNotification(wctx)
		idle.Stop()
		idled := wctx.Err() != nil
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err == nil:
			announce(l.waker, n.Payload)
		case idled && !conn.IsClosed():
			// The wait only timed out: the connection must still answer.
			if err := l.ping(ctx, conn); err != nil {
				return err
			}
		default:
			return fmt.Errorf("wait for notifications: %w", err)
		}
	}
}

// ping checks that conn still answers, within listenPingTimeout.
func (l *Listener) ping(ctx context.Context, conn *pgx.Conn) error {
	pctx, cancel := context.WithTimeout(ctx, listenPingTimeout)
	defer cancel()
	if err := conn.Ping(pctx); err != nil {
		return fmt.Errorf("ping after %s without notifications: %w", l.opts.IdleCheck, err)
	}
	return nil
}

// close closes conn within listenCloseTimeout, even once ctx has ended.
func (l *Listener) close(ctx context.Context, conn *pgx.Conn) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listenCloseTimeout)
	defer cancel()
	if err := conn.Close(cctx); err != nil {
		slog.Debug("live event listener's connection not closed cleanly", "database", l.shown, "err", err)
	}
}

// sleep waits d on the listener's clock; false if ctx ended first.
func (l *Listener) sleep(ctx context.Context, d time.Duration) bool {
	due := make(chan struct{})
	timer := l.opts.Clock.AfterFunc(d, func() { close(due) })
	defer timer.Stop()
	select {
	case <-due:
		return true
	case <-ctx.Done():
		return false
	}
}
