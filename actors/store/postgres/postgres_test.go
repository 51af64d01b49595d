package postgres_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// icu is the collation the tests' databases order text by by default: as
// people read it, not as bytes, which the store must not rely on.
var icu = pgtest.ICUCollation("en-US")

// TestConformance runs the store suite, each test on a database of its
// own.
func TestConformance(t *testing.T) {
	srv := pgtest.Start(t)
	storetest.Run(t, func(t *testing.T, opts ...store.Option) store.Store {
		return open(t, srv.NewDatabase(t, icu), postgres.WithStoreOptions(opts...))
	})
}

// open opens the store on dsn; it is closed when t ends.
func open(t *testing.T, dsn string, opts ...postgres.Option) *postgres.Store {
	t.Helper()
	is := is.NewRelaxed(t)
	s, err := postgres.Open(t.Context(), dsn, opts...)
	if err != nil {
		t.Fatalf("open the store: %v", err)
	}
	t.Cleanup(func() { is.NoErr(s.Close()) })
	return s
}

// TestStore runs the tests of what the suite cannot see, on one server.
func TestStore(t *testing.T) {
	srv := pgtest.Start(t)
	for _, tt := range []struct {
		name string
		test func(t *testing.T, srv *pgtest.Server)
	}{
		{"ReopenKeepsRecords", testReopenKeepsRecords},
		{"ConcurrentMigrations", testConcurrentMigrations},
		{"RefusesNewerSchema", testRefusesNewerSchema},
		{"RefusesOtherEncodings", testRefusesOtherEncodings},
		{"KeysCompareAsBytes", testKeysCompareAsBytes},
		{"OrderBelowTheMicrosecond", testOrderBelowTheMicrosecond},
		{"RecordsKeepEveryString", testRecordsKeepEveryString},
		{"Sealing", testSealing},
		{"Copy", testCopy},
		{"CopyIntoNonEmpty", testCopyIntoNonEmpty},
		{"Fence", testFence},
		{"MembershipFence", testMembershipFence},
		{"ClaimRuns", testClaimRuns},
		{"ClaimRunsRace", testClaimRunsRace},
		{"RecoverRunningOfItsNode", testRecoverRunningOfItsNode},
		{"EventsInCommitOrder", testEventsInCommitOrder},
		{"QueuedEventsNumbered", testQueuedEventsNumbered},
		{"MigrateGivesFinishedRunsTheirExpiry", testMigrateGivesFinishedRunsTheirExpiry},
		{"AStepCommitIsAJournalRow", testAStepCommitIsAJournalRow},
		{"ALongRunsJournalIsFolded", testALongRunsJournalIsFolded},
		{"ACommitReadsTheJournalAfterTheLock", testACommitReadsTheJournalAfterTheLock},
		{"AFencedNodeAppendsNoJournalRow", testAFencedNodeAppendsNoJournalRow},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.test(t, srv)
		})
	}
}

// testSealing runs the sealing suite on one database; what it keeps at
// rest is what a backup of it holds: its pg_dump.
func testSealing(t *testing.T, srv *pgtest.Server) {
	dsn := srv.NewDatabase(t, icu)
	storetest.Sealing(t, func(t *testing.T, opts ...store.Option) (store.Store, error) {
		return postgres.Open(t.Context(), dsn, postgres.WithStoreOptions(opts...))
	}, func(t *testing.T) []byte { return srv.Dump(t, dsn) })
}

// testReopenKeepsRecords closes and reopens a store (its migrations
// already applied: a no-op) and checks what it kept.
func testReopenKeepsRecords(t *testing.T, srv *pgtest.Server) {
	dsn := srv.NewDatabase(t, icu)
	storetest.Reopen(t, func(t *testing.T) store.Store {
		s, err := postgres.Open(t.Context(), dsn, postgres.WithStoreOptions(store.WithMaxEvents(2)))
		is.New(t).NoErr(err)
		return s
	})
}

// testConcurrentMigrations opens one new database from several nodes at
// once: each waits for the one migrating, and the schema is applied once.
func testConcurrentMigrations(t *testing.T, srv *pgtest.Server) {
	const nodes = 4
	is := is.New(t)
	ctx := t.Context()
	dsn := srv.NewDatabase(t)
	errs := make([]error, nodes)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range nodes {
		wg.Go(func() {
			<-start
			s, err := postgres.Open(ctx, dsn)
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		is.NoErr(err) // every node opened the store
	}
	versions := query[int](t, dsn, `SELECT version FROM schema_migrations ORDER BY version`)
	files, err := filepath.Glob("migrations/*.sql")
	is.NoErr(err)
	want := make([]int, len(files))
	for i := range want {
		want[i] = i + 1
	}
	is.Equal(versions, want) // each version applied once
}

// testRefusesNewerSchema opens a database that a newer build migrated.
func testRefusesNewerSchema(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	dsn := srv.NewDatabase(t)
	open(t, dsn)
	exec(t, dsn, `INSERT INTO schema_migrations (version, name) VALUES (999, 'from_the_future')`)
	_, err := postgres.Open(t.Context(), dsn)
	is.True(err != nil)                                   // a newer build wrote it
	is.True(strings.Contains(err.Error(), "version 999")) // and the error says so
}

// testRefusesOtherEncodings opens a database that is not UTF-8.
func testRefusesOtherEncodings(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	dsn := srv.NewDatabase(t, "TEMPLATE template0 ENCODING 'SQL_ASCII' LOCALE 'C'")
	_, err := postgres.Open(t.Context(), dsn)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "SQL_ASCII")) // says why
}

// testKeysCompareAsBytes lists records whose ids a human collation orders
// otherwise: they come sorted as byte strings, as from the other stores.
func testKeysCompareAsBytes(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	s := open(t, srv.NewDatabase(t, icu))
	ids := []string{"b", "B", "a-2", "a_1", "A", "é", "e"}
	for _, id := range ids {
		is.NoErr(s.CreateWorkspace(ctx, store.Workspace{ID: id, Revision: 1}))
		is.NoErr(s.CreateRun(ctx, store.Run{ID: id, Status: store.RunCompleted, UpdatedAt: time.Unix(0, 0)}, nil))
	}
	want := []string{"A", "B", "a-2", "a_1", "b", "e", "é"} // byte order
	list, err := s.ListWorkspaces(ctx)
	is.NoErr(err)
	got := []string{}
	for _, w := range list {
		got = append(got, w.ID)
	}
	is.Equal(got, want)
	runs, _, err := s.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	got = []string{}
	for _, r := range runs {
		got = append([]string{r.ID}, got...) // ties on time: by id, descending
	}
	is.Equal(got, want)
}

// testOrderBelowTheMicrosecond lists runs updated within one microsecond,
// which PostgreSQL's timestamps cannot tell apart: they come in the order
// of their times, to the nanosecond.
func testOrderBelowTheMicrosecond(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	s := open(t, srv.NewDatabase(t))
	base := time.Date(2026, 3, 1, 12, 0, 0, 999_999_000, time.UTC)
	for id, offset := range map[string]time.Duration{"a": 900, "b": 100, "c": 1000, "d": 0} {
		is.NoErr(s.CreateRun(ctx, store.Run{ID: id, Status: store.RunRunning, UpdatedAt: base.Add(offset)}, nil))
	}
	runs, _, err := s.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	got := []string{}
	for _, r := range runs {
		got = append(got, r.ID)
	}
	is.Equal(got, []string{"c", "a", "b", "d"}) // newest first, across a second's boundary too
	is.True(runs[0].UpdatedAt.Equal(base.Add(1000)))
}

// testRecordsKeepEveryString stores strings that PostgreSQL's jsonb would
// refuse (U+0000) or change: records are text, kept as encoded.
func testRecordsKeepEveryString(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	s := open(t, srv.NewDatabase(t))
	state := map[string]any{"nul": "a\x00b", "big": 1e300, "tiny": 5e-324, "keys": map[string]any{"b": 1.0, "a": 2.0}}
	r := store.Run{ID: "run", Status: store.RunRunning}
	is.NoErr(s.CreateRun(ctx, r, nil))
	r.State = state
	r.TraceCount = 1
	is.NoErr(s.RecordProgress(ctx, r, []workflow.TraceEntry{{NodeID: "n", Output: workflow.Object{"body": "\x00"}}}))
	got, err := s.GetRun(ctx, "run")
	is.NoErr(err)
	is.Equal(got.State, state)
	trace, err := s.ReadTrace(ctx, "run", 0, 0)
	is.NoErr(err)
	is.Equal(trace[0].Output["body"], "\x00")
}

// query runs a query on dsn and collects its one column.
func query[T any](t *testing.T, dsn, sql string) []T {
	t.Helper()
	is := is.New(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	is.NoErr(err)
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, sql)
	is.NoErr(err)
	list, err := pgx.CollectRows(rows, pgx.RowTo[T])
	is.NoErr(err)
	return list
}

// exec runs a statement on dsn.
func exec(t *testing.T, dsn, sql string) {
	t.Helper()
	is := is.New(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	is.NoErr(err)
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	is.NoErr(err)
}

// testMigrateGivesFinishedRunsTheirExpiry takes a database back to
// schema version 4, before retention, with a finished run and an
// interrupted one, and opens it: the finished run expires the store's
// retention after its end, the interrupted one never.
func testMigrateGivesFinishedRunsTheirExpiry(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	dsn := srv.NewDatabase(t)
	s, err := postgres.Open(ctx, dsn, postgres.WithStoreOptions(store.WithRetention(0)))
	is.NoErr(err)
	end := time.Date(2026, 3, 1, 12, 0, 0, 500_000_000, time.UTC)
	is.NoErr(storetest.FinishedRun(ctx, s, "done", end))
	is.NoErr(storetest.InterruptedRun(ctx, s, "waiting", end))
	is.NoErr(s.Close())
	exec(t, dsn, `DROP TABLE run_journal`)
	exec(t, dsn, `DROP TABLE webhook_delivery_log`)
	exec(t, dsn, `DROP TABLE schedules`)
	exec(t, dsn, `DROP TABLE webhook_deliveries`)
	exec(t, dsn, `DROP TABLE webhooks`)
	exec(t, dsn, `DROP TABLE idempotency_keys`)
	exec(t, dsn, `DROP TABLE run_values`)
	exec(t, dsn, `ALTER TABLE runs DROP COLUMN expires_at`)
	exec(t, dsn, `DROP TABLE run_tombstones`)
	exec(t, dsn, `DELETE FROM schema_migrations WHERE version >= 5`)

	storetest.ExpiresAfterMigration(t, open(t, dsn, postgres.WithStoreOptions(store.WithRetention(time.Hour))), end, time.Hour)
}
