package pgtest_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
)

// TestDatabases starts a server and gives two tests a database each: each
// starts empty, and the ICU collation orders text as people read it.
func TestDatabases(t *testing.T) {
	srv := pgtest.Start(t)
	for _, tt := range []struct {
		name string
		opts []pgtest.DatabaseOption
		want []string
	}{
		{"bytes", nil, []string{"B", "a"}},
		{"icu", []pgtest.DatabaseOption{pgtest.ICUCollation("en-US")}, []string{"a", "B"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			ctx := t.Context()
			conn, err := pgx.Connect(ctx, srv.NewDatabase(t, tt.opts...))
			is.NoErr(err)
			defer conn.Close(ctx)
			var tables int
			is.NoErr(conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables))
			is.Equal(tables, 0) // a new database is empty
			rows, err := conn.Query(ctx, `SELECT v FROM (VALUES ('a'), ('B')) AS t (v) ORDER BY v`)
			is.NoErr(err)
			got, err := pgx.CollectRows(rows, pgx.RowTo[string])
			is.NoErr(err)
			is.Equal(got, tt.want) // the database's default collation
		})
	}
}
