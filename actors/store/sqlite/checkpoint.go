package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"time"
)

// The checkpointer's pace: it looks every checkpointTick, and checkpoints
// once checkpointCommits commits were made since the last checkpoint
// (some thousand pages of log, SQLite's own auto-checkpoint size), or
// checkpointEvery has passed with at least one.
const (
	checkpointTick    = 250 * time.Millisecond
	checkpointCommits = 250
	checkpointEvery   = time.Second
	checkpointTimeout = 30 * time.Second
)

// checkpointer copies the write-ahead log into the database file in the
// background, on a connection of its own, so that commits rarely pay for
// it. With SQLite's default, the commit that crosses 1,000 pages of log
// runs the checkpoint itself, copying and syncing the database file
// before it returns: that is the tail of a commit's latency, and it comes
// more often with the log that deletes write (docs/performance.md,
// "Retention"). A PASSIVE checkpoint waits for no reader and no writer.
// Once it has copied the whole log and no reader needs it, the next
// write starts the log over. Under a steady load, though, commits append
// to the log while it copies, and it may never catch up: so the writer
// still checkpoints when the log reaches writerCheckpointPages, four times
// the default, by when the checkpointer has copied nearly all of it, and
// the log starts over. A log grown past walSizeLimit is truncated back
// to it.
type checkpointer struct {
	db      *sql.DB
	commits func() uint64 // the writer's commit count
	stop    chan struct{}
	done    chan struct{}
}

// startCheckpointer opens the checkpointer's connection on path through
// the driver named driverName and starts it; commits reads the writer's
// commit count.
func startCheckpointer(ctx context.Context, driverName, path string, commits func() uint64) (*checkpointer, error) {
	db, err := sql.Open(driverName, dsn(path, url.Values{
		"_pragma": {
			fmt.Sprintf("busy_timeout(%d)", busyTimeoutMs),
			fmt.Sprintf("journal_size_limit(%d)", walSizeLimit),
		},
	}))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("open the checkpointer's connection: %w", err)
	}
	c := &checkpointer{db: db, commits: commits, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c, nil
}

// run checkpoints at its pace until close.
func (c *checkpointer) run() {
	defer close(c.done)
	tick := time.NewTicker(checkpointTick)
	defer tick.Stop()
	last, at := c.commits(), time.Now()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		n := c.commits()
		if n == last || n-last < checkpointCommits && time.Since(at) < checkpointEvery {
			continue
		}
		if err := c.checkpoint(); err != nil {
			slog.Warn("the store's write-ahead log was not checkpointed; the next tick tries again", "err", err)
			continue
		}
		last, at = n, time.Now()
	}
}

// checkpoint runs one PASSIVE checkpoint.
func (c *checkpointer) checkpoint() error {
	ctx, cancel := context.WithTimeout(context.Background(), checkpointTimeout)
	defer cancel()
	var busy, frames, copied int
	return c.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied)
}

// close stops the checkpointer, waits for it and closes its connection.
// A nil checkpointer is closed already.
func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	close(c.stop)
	<-c.done
	return c.db.Close()
}
