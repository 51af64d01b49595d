package engines_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/integration/engines"
)

// engineOp is one engine's op of an alternated benchmark: op(i) does the
// op's i-th time.
type engineOp struct {
	engine string
	op     func(i int) error
}

// BenchmarkWarmRunCommitsAlternated is BenchmarkWarmRunCommits with the
// engines in turns in one loop, so that both see the same machine (the
// disk's sync latency above all): it reports each engine's median time
// per run (ENGINE-p50-ns) and cgo's over modernc's (cgo/modernc-p50).
func BenchmarkWarmRunCommitsAlternated(b *testing.B) {
	w := warmRun(b)
	alternateAtEachLevel(b, func(b *testing.B, level syncLevel) (ops []engineOp) {
		for _, engine := range sqliteEngines {
			s, ctx := openStore(b, engine.driver, level), b.Context()
			ops = append(ops, engineOp{engine.name, func(i int) error { return w.Replay(ctx, s, runID(i)) }})
		}
		return ops
	})
}

// BenchmarkStepCommitAlternated is BenchmarkStepCommit with the engines
// in turns in one loop: it reports each engine's median time per step
// commit (ENGINE-p50-ns) and each one's over modernc's.
func BenchmarkStepCommitAlternated(b *testing.B) {
	w := warmRun(b)
	step := w.Step()
	alternateAtEachLevel(b, func(b *testing.B, level syncLevel) (ops []engineOp) {
		for _, engine := range sqliteEngines {
			s, ctx := openStore(b, engine.driver, level), b.Context()
			createRuns(b, func(i int) error { return engines.Commit(ctx, s, engines.As(w[0], runID(i))) })
			ops = append(ops, engineOp{engine.name, func(i int) error { return engines.Commit(ctx, s, engines.As(step, runID(i))) }})
		}
		return append(ops, pebbleOp(b, level, step))
	})
}

// alternateAtEachLevel runs, at each sync level, a sub-benchmark
// sync=LEVEL that alternates the ops that engines opens for it.
func alternateAtEachLevel(b *testing.B, engines func(b *testing.B, level syncLevel) []engineOp) {
	for _, level := range levels {
		b.Run(fmt.Sprintf("sync=%s", level.sqlite), func(b *testing.B) { alternate(b, engines(b, level)) })
	}
}

// alternate does each of ops b.N times, in turns, the order of each turn
// rotated by one from the last's, and reports the median time of each
// (ENGINE-p50-ns) and its ratio to the first's (ENGINE/FIRST-p50).
func alternate(b *testing.B, ops []engineOp) {
	b.Helper()
	times := make([][]time.Duration, len(ops))
	for k := range times {
		times[k] = make([]time.Duration, 0, b.N)
	}
	b.ResetTimer()
	for i := range b.N {
		for k := range ops {
			o := (i + k) % len(ops)
			start := time.Now()
			if err := ops[o].op(i); err != nil {
				b.Fatal(err)
			}
			times[o] = append(times[o], time.Since(start))
		}
	}
	b.StopTimer()
	first := median(times[0])
	for k, o := range ops {
		p50 := median(times[k])
		b.ReportMetric(float64(p50.Nanoseconds()), o.engine+"-p50-ns")
		if k > 0 {
			b.ReportMetric(float64(p50)/float64(first), o.engine+"/"+ops[0].engine+"-p50")
		}
	}
}

// median is the median of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkJournalAppendAlternated measures the journal append alone, the
// engines in turns in one loop: the warm run's step commit as a row of
// engines.SQLiteJournal on modernc and on cgo SQLite (the engine and
// database/sql, without the store's writer), and of engines.PebbleJournal,
// all encoded alike. It reports each one's median time per append
// (ENGINE-p50-ns) and its ratio to modernc's.
func BenchmarkJournalAppendAlternated(b *testing.B) {
	w := warmRun(b)
	step := w.Step()
	alternateAtEachLevel(b, func(b *testing.B, level syncLevel) (ops []engineOp) {
		for _, engine := range []struct{ name, driver string }{{"modernc", engines.ModerncDriver}, {"cgo", engines.CgoDriver}} {
			j, ctx := openSQLiteJournal(b, engine.driver, level.sqlite), b.Context()
			ops = append(ops, engineOp{engine.name, func(i int) error { return j.Append(ctx, engines.As(step, runID(i)), int64(i), 1) }})
		}
		return append(ops, pebbleOp(b, level, step))
	})
}

// pebbleOp appends step, as a commit of run i, to a Pebble journal synced
// as level says.
func pebbleOp(b *testing.B, level syncLevel, step store.Commit) engineOp {
	j := openPebble(b, level.pebble)
	return engineOp{"pebble", func(i int) error { return j.Append(engines.As(step, runID(i)), 1) }}
}

// openSQLiteJournal opens an engines.SQLiteJournal through driverName in
// b's temporary directory, closed when b ends.
func openSQLiteJournal(b *testing.B, driverName string, level sqlite.Sync) *engines.SQLiteJournal {
	b.Helper()
	j, err := engines.OpenSQLiteJournal(b.Context(), driverName, filepath.Join(b.TempDir(), "journal.db"), level)
	return closedAtEnd(b, j, err)
}
