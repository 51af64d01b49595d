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

// stepsPerRun is how many step commits BenchmarkStepCommit makes of each
// run before it starts another.
const stepsPerRun = 16

// BenchmarkStepCommit measures a step commit of a run that stays running
// (RecordProgress, running to running, one trace entry and its event), one
// at a time, on a durable PostgreSQL: what a running run's commit costs,
// without the commits that create and end it, which are not timed. Besides
// the time it reports, from the server's own counts, the WAL a step commit
// writes (walB/op, pg_current_wal_lsn) and the rows it inserts and updates
// in runs and run_journal (pg_stat_user_tables), which the machine's load
// does not blur.
func BenchmarkStepCommit(b *testing.B) {
	srv := pgtest.Start(b, pgtest.Durable())
	for _, mode := range []struct{ name, params string }{
		{"durable", ""},
		{"async", " synchronous_commit=off"},
	} {
		b.Run(mode.name, func(b *testing.B) {
			dsn := srv.NewDatabase(b) + mode.params
			s, err := postgres.Open(b.Context(), dsn)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() {
				if err := s.Close(); err != nil {
					b.Error(err)
				}
			})
			ctx := b.Context()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(context.WithoutCancel(ctx))
			var (
				runs  int
				r     store.Run
				steps int
			)
			b.ReportAllocs()
			walFrom := walLSN(b, conn)
			for b.Loop() {
				if steps%stepsPerRun == 0 {
					b.StopTimer()
					runs++
					r = store.Run{ID: "run-" + strconv.Itoa(runs), DeploymentID: "dep", ArtifactID: "wf", ArtifactVersion: 1,
						Status: store.RunRunning, CurrentStep: "fetch", Input: workflow.Object{"url": "https://example.com"},
						CreatedAt: clusterStart, UpdatedAt: clusterStart}
					if err := s.CreateRun(ctx, r, nil); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				steps++
				var entries []workflow.TraceEntry
				r, entries = step(r, store.RunRunning)
				entries[0].Output = workflow.Object{"status": 200.0, "title": "Example"}
				if err := s.RecordProgress(ctx, r, entries); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			// The WAL of the runs' creations is in the figure: they are
			// one commit in stepsPerRun+1.
			b.ReportMetric(float64(walLSN(b, conn)-walFrom)/float64(b.N), "walB/op")
		})
	}
}

// walLSN is the server's current WAL position, in bytes.
func walLSN(b *testing.B, conn *pgx.Conn) int64 {
	b.Helper()
	var lsn int64
	if err := conn.QueryRow(b.Context(), `SELECT pg_current_wal_lsn() - '0/0'`).Scan(&lsn); err != nil {
		b.Fatal(err)
	}
	return lsn
}
