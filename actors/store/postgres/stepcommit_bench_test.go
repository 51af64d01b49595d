package postgres_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// stepsPerRun is how many step commits the run commit benchmarks make of
// each run.
const stepsPerRun = 4

// BenchmarkStepCommit measures a step commit of a run that stays running
// (RecordProgress, running to running, one trace entry and its event), one
// at a time, on a durable PostgreSQL: what a running run's commit costs,
// without the commits that create the runs (one every stepsPerRun steps),
// which are neither timed nor counted. Besides the time it reports the WAL
// a step commit writes (walB/op, from pg_current_wal_lsn), a count that the
// machine's load does not blur. "durable" waits for the WAL's flush at
// commit, "async" does not (synchronous_commit=off).
func BenchmarkStepCommit(b *testing.B) {
	benchmarkRuns(b, func(b *testing.B, s store.Store, next func() store.Run, wal func() int64) int64 {
		var (
			r       store.Run
			steps   int
			created int64 // the WAL of the runs' creations
		)
		for b.Loop() {
			if steps%stepsPerRun == 0 {
				b.StopTimer()
				from := wal()
				r = next()
				if err := s.CreateRun(b.Context(), r, nil); err != nil {
					b.Fatal(err)
				}
				created += wal() - from
				b.StartTimer()
			}
			steps++
			var err error
			if r, err = stepRun(b.Context(), s, r, store.RunRunning); err != nil {
				b.Fatal(err)
			}
		}
		return created
	})
}

// checkpointedRuns is how many runs BenchmarkStepCommitAfterACheckpoint
// steps in turn.
const checkpointedRuns = 400

// BenchmarkStepCommitAfterACheckpoint measures step commits as
// BenchmarkStepCommit does, one step of each of checkpointedRuns runs in
// turn, each round after a CHECKPOINT (neither timed nor counted): the
// first change of a page after a checkpoint logs the whole page (full
// page writes), so this counts the pages a step commit touches, as a
// server with many runs between its checkpoints sees it.
func BenchmarkStepCommitAfterACheckpoint(b *testing.B) {
	benchmarkRuns(b, func(b *testing.B, s store.Store, next func() store.Run, wal func() int64) int64 {
		ctx := b.Context()
		runs := make([]store.Run, checkpointedRuns)
		var (
			steps    int
			excluded int64 // the WAL of the creations and the checkpoints
		)
		for b.Loop() {
			i := steps % checkpointedRuns
			if i == 0 {
				b.StopTimer()
				from := wal()
				if steps == 0 {
					for i := range runs {
						runs[i] = next()
						if err := s.CreateRun(ctx, runs[i], nil); err != nil {
							b.Fatal(err)
						}
					}
				}
				if _, err := s.(*postgres.Store).Pool().Exec(ctx, `CHECKPOINT`); err != nil {
					b.Fatal(err)
				}
				excluded += wal() - from
				b.StartTimer()
			}
			steps++
			var err error
			if runs[i], err = stepRun(ctx, s, runs[i], store.RunRunning); err != nil {
				b.Fatal(err)
			}
		}
		return excluded
	})
}

// BenchmarkRunCommits measures every commit of a run, one run at a time:
// its creation, stepsPerRun step commits and its end (which folds its
// journal), and reports the WAL of the whole (walB/op, one op a run).
func BenchmarkRunCommits(b *testing.B) {
	benchmarkRuns(b, func(b *testing.B, s store.Store, next func() store.Run, _ func() int64) int64 {
		for b.Loop() {
			r := next()
			err := s.CreateRun(b.Context(), r, nil)
			for i := 0; err == nil && i <= stepsPerRun; i++ {
				status := store.RunRunning
				if i == stepsPerRun {
					status = store.RunCompleted
				}
				r, err = stepRun(b.Context(), s, r, status)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		return 0
	})
}

// benchmarkRuns runs bench on a new durable PostgreSQL, with durable and
// asynchronous commits; bench makes its runs with next, reads the
// server's WAL position with wal, and returns the WAL of what it did that
// is not to be counted. It reports the rest of the WAL written while it
// ran, per op (walB/op).
func benchmarkRuns(b *testing.B, bench func(b *testing.B, s store.Store, next func() store.Run, wal func() int64) (excluded int64)) {
	srv := pgtest.Start(b, pgtest.Durable())
	for _, mode := range []struct{ name, params string }{
		{"durable", ""},
		{"async", " synchronous_commit=off"},
	} {
		b.Run(mode.name, func(b *testing.B) {
			ctx := b.Context()
			dsn := srv.NewDatabase(b) + mode.params
			s, err := postgres.Open(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() {
				if err := s.Close(); err != nil {
					b.Error(err)
				}
			})
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(context.WithoutCancel(ctx))
			wal := func() int64 {
				var lsn int64
				if err := conn.QueryRow(ctx, `SELECT pg_current_wal_lsn() - '0/0'`).Scan(&lsn); err != nil {
					b.Fatal(err)
				}
				return lsn
			}
			var runs int
			next := func() store.Run {
				runs++
				return store.Run{ID: "run-" + strconv.Itoa(runs), DeploymentID: "dep", ArtifactID: "wf", ArtifactVersion: 1,
					Status: store.RunRunning, CurrentStep: "fetch", Input: workflow.Object{"url": "https://example.com"},
					CreatedAt: clusterStart, UpdatedAt: clusterStart}
			}
			b.ReportAllocs()
			from := wal()
			excluded := bench(b, s, next, wal)
			b.StopTimer()
			b.ReportMetric(float64(wal()-from-excluded)/float64(b.N), "walB/op")
		})
	}
}

// stepRun commits r's next step, with status, and returns r after it.
func stepRun(ctx context.Context, s store.Store, r store.Run, status string) (store.Run, error) {
	r, entries := step(r, status)
	entries[0].Output = workflow.Object{"status": 200.0, "title": "Example"}
	return r, s.RecordProgress(ctx, r, entries)
}
