package config

import (
	"errors"
	"time"
)

// Default retention settings (docs/operations.md, "Retention").
const (
	DefaultFinishedRetention  = 30 * 24 * time.Hour
	DefaultTombstoneRetention = 30 * 24 * time.Hour
	DefaultPruneInterval      = 10 * time.Second
	DefaultIdempotencyWindow  = 24 * time.Hour
)

// Retention says how long the store keeps finished runs and how it prunes
// them. Each deployment may set its own time for its runs (its
// "retention" field); this is the server's, for the rest. Every field is
// optional: an absent one keeps the default.
type Retention struct {
	// FinishedSeconds is how long a finished run (completed, failed,
	// cancelled) is kept after it ended: absent, 30 days; 0, for ever.
	// Interrupted and running runs are never pruned.
	FinishedSeconds *int64 `json:"finished_seconds,omitempty"`
	// TombstoneSeconds is how long, after a run was pruned, inspecting it
	// still answers "not found (pruned)" rather than plain "not found":
	// absent, 30 days. The store keeps the run's id that long (some 60
	// bytes a run).
	TombstoneSeconds *int64 `json:"tombstone_seconds,omitempty"`
	// IdempotencySeconds is how long the idempotency key of a run start
	// holds its run (a second start with the key answers with that run):
	// absent, 24 hours (docs/triggers.md, "Idempotent starts"). Retention
	// drops a key once this has passed.
	IdempotencySeconds *int64 `json:"idempotency_seconds,omitempty"`
	// IntervalMS is how long the pruner waits, once nothing is left to
	// prune, before it looks again: absent, 10000.
	IntervalMS int `json:"interval_ms,omitempty"`
}

// Validate checks the values a retention block sets.
func (r *Retention) Validate() error {
	if r == nil {
		return nil
	}
	var errs []error
	if r.FinishedSeconds != nil && *r.FinishedSeconds < 0 {
		errs = append(errs, errors.New("retention: finished_seconds must not be negative (0 keeps finished runs for ever)"))
	}
	if r.TombstoneSeconds != nil && *r.TombstoneSeconds < 0 {
		errs = append(errs, errors.New("retention: tombstone_seconds must not be negative"))
	}
	if r.IdempotencySeconds != nil && *r.IdempotencySeconds <= 0 {
		errs = append(errs, errors.New("retention: idempotency_seconds must be positive"))
	}
	if r.IntervalMS < 0 {
		errs = append(errs, errors.New("retention: interval_ms must not be negative"))
	}
	return errors.Join(errs...)
}

// Finished is how long finished runs are kept: DefaultFinishedRetention
// unless set; 0 is for ever.
func (r *Retention) Finished() time.Duration {
	if r == nil {
		return DefaultFinishedRetention
	}
	return secondsOr(r.FinishedSeconds, DefaultFinishedRetention)
}

// Tombstones is how long a pruned run's tombstone is kept.
func (r *Retention) Tombstones() time.Duration {
	if r == nil {
		return DefaultTombstoneRetention
	}
	return secondsOr(r.TombstoneSeconds, DefaultTombstoneRetention)
}

// IdempotencyWindow is how long a run start's idempotency key holds its
// run: DefaultIdempotencyWindow unless set.
func (r *Retention) IdempotencyWindow() time.Duration {
	if r == nil {
		return DefaultIdempotencyWindow
	}
	return secondsOr(r.IdempotencySeconds, DefaultIdempotencyWindow)
}

// Interval is how long the pruner waits between passes.
func (r *Retention) Interval() time.Duration {
	if r == nil || r.IntervalMS == 0 {
		return DefaultPruneInterval
	}
	return time.Duration(r.IntervalMS) * time.Millisecond
}

// secondsOr is v seconds, or def when v is unset.
func secondsOr(v *int64, def time.Duration) time.Duration {
	if v == nil {
		return def
	}
	return time.Duration(*v) * time.Second
}
