package store

import (
	"context"
	"fmt"
	"time"
)

// DefaultRetention is how long a finished run is kept unless the store
// was opened WithRetention or its deployment says otherwise.
const DefaultRetention = 30 * 24 * time.Hour

// ErrPruned means a run does not exist any more because retention pruned
// it. It is an ErrNotFound: errors.Is(err, ErrNotFound) holds too.
var ErrPruned = fmt.Errorf("%w (pruned)", ErrNotFound)

// Retention says how long a deployment's finished runs are kept (an
// mcpflow extension of the deployment). A nil field keeps the server's
// setting.
type Retention struct {
	// FinishedSeconds is how long a run is kept after it ended (completed,
	// failed or cancelled); 0 keeps it for ever.
	FinishedSeconds *int64 `json:"finished_seconds,omitempty"`
	// Transient says the runs are not to be recorded (a pass-through call
	// of a connection exposed with record false): each is kept while it
	// runs (for its interrupts, its cancel and its recovery) and for
	// TransientGrace after it ended (for its caller to read its result),
	// and appends no admin event. It is set on a run's own copy of its
	// deployment only, never on a stored deployment.
	Transient bool `json:"transient,omitempty"`
}

// TransientGrace is how long a transient run is kept after it ended.
const TransientGrace = time.Minute

// RunExpiry returns when retention may prune r, as committed: nil while
// r has not ended (running and interrupted runs are kept until they end)
// or when it is kept for ever. A finished run is kept for its
// deployment's retention, as the run's own copy of the deployment (the
// one it started with) says, else for def; 0 is for ever. The time is
// r.UpdatedAt, the end, plus that retention. Implementations of Store
// call it at every commit, so that they agree.
func RunExpiry(r Run, def time.Duration) *time.Time {
	if !Terminal(r.Status) {
		return nil
	}
	keep := def
	if ret := r.Deployment.Retention; ret != nil && ret.Transient {
		keep = TransientGrace
	} else if ret != nil && ret.FinishedSeconds != nil {
		keep = time.Duration(*ret.FinishedSeconds) * time.Second
	}
	if keep <= 0 {
		return nil
	}
	at := r.UpdatedAt.UTC().Add(keep)
	return &at
}

// PruneLimit bounds one PruneRuns call, which is one write: at most Runs
// runs, and past the first, no more than about Rows rows (a run's row,
// its trace entries and its events; a run counts 1 + 3 per trace entry,
// since each step adds about two events), so that the write holds the
// store's writer only briefly.
type PruneLimit struct {
	Runs int
	Rows int
}

// RunRetention prunes the runs whose retention has passed. The runs of a
// store are pruned by the owner of its retention (actors/retention), in
// the background, in bounded batches.
type RunRetention interface {
	// PruneRuns deletes, in one transaction, the finished runs whose
	// expiry (RunExpiry) is at or before now, soonest expiry first,
	// within limit: each with its trace and its event log, leaving a
	// tombstone, so that GetRun, ReadTrace and ReadRunEvents of it are
	// ErrPruned while the tombstone is kept. ListRuns and ListEvents never
	// mention a pruned run, and pruning appends no event. It returns how
	// many runs it pruned: fewer than limit.Runs (0 included) when no
	// more had expired, or the rows bound was reached. Several callers
	// at once, of one process or of several nodes, prune disjoint runs.
	PruneRuns(ctx context.Context, now time.Time, limit PruneLimit) (int, error)
	// DropTombstones deletes up to limit tombstones of runs pruned before
	// `before`, oldest first, and returns how many it deleted.
	DropTombstones(ctx context.Context, before time.Time, limit int) (int, error)
	// DropIdempotencyKeys deletes up to limit idempotency key claims
	// (IdempotencyKeys) that expired at or before now, soonest first,
	// and returns how many it deleted.
	DropIdempotencyKeys(ctx context.Context, now time.Time, limit int) (int, error)
	// ReclaimSpace gives a bounded amount of the space that deletes freed
	// back to the file system, where the database does not reuse it by
	// itself (SQLite's incremental vacuum). It reports whether free space
	// is left to reclaim.
	ReclaimSpace(ctx context.Context) (more bool, err error)
	// StoreSize is the store's size in bytes: its files (SQLite, with the
	// write-ahead log), or its database (PostgreSQL); 0 for one in
	// memory.
	StoreSize(ctx context.Context) (int64, error)
}

// PruneCost is what a run with traceCount trace entries counts against
// PruneLimit.Rows.
func PruneCost(traceCount int) int { return 1 + 3*traceCount }

// PruneBatch counts the runs one PruneRuns takes against its limit, in
// the order it meets them. Implementations of RunRetention use it, so
// that they agree.
type PruneBatch struct {
	limit      PruneLimit
	runs, rows int
}

// NewPruneBatch starts counting against limit.
func NewPruneBatch(limit PruneLimit) *PruneBatch { return &PruneBatch{limit: limit} }

// Take counts a run of traceCount trace entries and reports whether it
// fits the limit: the first run always does, whatever its size; the next
// ones while the batch holds fewer than limit.Runs runs and the rows stay
// within limit.Rows. Once a run does not fit, the batch is full.
func (b *PruneBatch) Take(traceCount int) bool {
	cost := PruneCost(traceCount)
	if b.runs >= b.limit.Runs || b.runs > 0 && b.rows+cost > b.limit.Rows {
		return false
	}
	b.runs, b.rows = b.runs+1, b.rows+cost
	return true
}

// ExpiredRows are the rows of a database's query of the expired runs,
// each an id and a trace count, soonest expiry first: a *sql.Rows or a
// pgx.Rows.
type ExpiredRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// PruneIDs reads from rows the ids of the runs a PruneRuns within limit
// takes (see PruneBatch). The caller closes rows.
func PruneIDs(rows ExpiredRows, limit PruneLimit) ([]string, error) {
	var ids []string
	batch := NewPruneBatch(limit)
	for rows.Next() {
		var id string
		var traceCount int
		if err := rows.Scan(&id, &traceCount); err != nil {
			return nil, err
		}
		if !batch.Take(traceCount) {
			break
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
