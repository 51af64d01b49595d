package app_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
)

// TestStartOnPostgres starts on the PostgreSQL store a config names: the
// app migrates that database and keeps its records there.
func TestStartOnPostgres(t *testing.T) {
	is := is.New(t)
	srv := pgtest.Start(t)
	dsn := srv.NewDatabase(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cfg := &config.File{Version: 1, Server: config.Server{Store: config.Store{
		Kind: config.StorePostgres, DSN: dsn, Root: filepath.Join(t.TempDir(), "store"),
	}}}
	opts := app.DefaultOptions(cfg)
	opts.WarmUp = 0
	a, err := app.Start(ctx, opts)
	is.NoErr(err)
	is.NoErr(a.Shutdown(ctx))

	conn, err := pgx.Connect(ctx, dsn)
	is.NoErr(err)
	defer conn.Close(context.WithoutCancel(ctx))
	var version int
	is.NoErr(conn.QueryRow(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&version))
	is.True(version >= 1) // the app migrated the database it was given
}

// TestStartOnPostgresHidesTheDSN starts on a PostgreSQL store that cannot
// be reached: the error names the database, never the password.
func TestStartOnPostgresHidesTheDSN(t *testing.T) {
	is := is.New(t)
	const password = "pw-0b5e"
	cfg := &config.File{Version: 1, Server: config.Server{Store: config.Store{
		Kind: config.StorePostgres, DSN: "postgres://mcpflow:" + password + "@127.0.0.1:1/mcpflow?connect_timeout=5",
		Root: filepath.Join(t.TempDir(), "store"),
	}}}
	opts := app.DefaultOptions(cfg)
	opts.WarmUp = 0
	_, err := app.Start(t.Context(), opts)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "postgres://mcpflow@127.0.0.1:1/mcpflow")) // names the database
	is.True(!strings.Contains(err.Error(), password))                                // never the password
}
