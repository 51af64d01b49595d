package sqlite

import (
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Sync is how far a commit must reach before the Store acknowledges it.
type Sync string

// The sync levels.
const (
	// SyncFull syncs the write-ahead log to disk at every commit
	// (synchronous=FULL): an acknowledged write survives a crash of the
	// process, a crash of the operating system and a power loss.
	SyncFull Sync = "full"
	// SyncNormal hands each commit to the operating system without
	// syncing it; the log is synced at each checkpoint
	// (synchronous=NORMAL in WAL mode). An acknowledged write survives a
	// crash of the process, but the last ones before a crash of the
	// operating system or a power loss may be lost. Either way the
	// database stays consistent: a commit is kept whole or not at all.
	SyncNormal Sync = "normal"
)

// pragma is the value of PRAGMA synchronous for s; "" keeps SyncFull.
func (s Sync) pragma() (string, error) {
	switch s {
	case "", SyncFull:
		return "FULL", nil
	case SyncNormal:
		return "NORMAL", nil
	}
	return "", fmt.Errorf("sync level must be %q or %q, got %q", SyncFull, SyncNormal, s)
}

// Option is a setting of Open.
type Option func(*options)

// options are the settings of Open.
type options struct {
	store  store.Options
	sync   Sync
	driver string // see WithDriver
	batch  batchLimits
	// checkpointPages is the write-ahead log's size, in pages, at which
	// a commit checkpoints (writerCheckpointPages); 0 never checkpoints,
	// and starts no checkpointer: for tests that count the log's frames.
	checkpointPages int
}

// WithSync sets the sync level; without it, a store syncs at SyncFull.
func WithSync(s Sync) Option {
	return func(o *options) { o.sync = s }
}

// WithDriver opens the database through the database/sql driver
// registered under name rather than modernc's (pure Go), which mcpflow
// itself always uses: to measure another build of SQLite on the store's
// own code (integration/engines). The driver must take the store's data
// source names, file: URIs with modernc's parameters (_pragma, each a
// PRAGMA to run on a new connection, and _txlock), and define Functions
// on each connection. A full disk is recognised by modernc's error codes
// only (store.ErrFull).
func WithDriver(name string) Option {
	return func(o *options) { o.driver = name }
}

// WithStoreOptions applies the settings every store takes.
func WithStoreOptions(opts ...store.Option) Option {
	return func(o *options) {
		for _, opt := range opts {
			opt(&o.store)
		}
	}
}

// newOptions returns the defaults with opts applied.
func newOptions(opts ...Option) options {
	o := options{store: store.NewOptions(), sync: SyncFull, driver: moderncDriver, batch: defaultBatchLimits, checkpointPages: writerCheckpointPages}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}
