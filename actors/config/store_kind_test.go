package config_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

// TestStorePostgresTakesItsDSNFromTheEnvironment loads the documented
// PostgreSQL store: the dsn is expanded from the environment.
func TestStorePostgresTakesItsDSNFromTheEnvironment(t *testing.T) {
	is := is.New(t)
	const dsn = "postgres://mcpflow:pw-51c0@db.internal:5432/mcpflow"
	t.Setenv("MCPFLOW_PG_DSN", dsn)
	f, err := config.Parse([]byte(`{"version":1,"server":{"store":{"kind":"postgres","dsn":"${MCPFLOW_PG_DSN}"}}}`))
	is.NoErr(err)
	is.Equal(f.Server.Store, config.Store{Kind: config.StorePostgres, DSN: dsn})
}

// TestStoreKindsAndWhatTheyTake refuses a store that is not one of the
// kinds, or lacks or has what its kind takes, and never quotes the dsn.
func TestStoreKindsAndWhatTheyTake(t *testing.T) {
	const secret = "pw-51c0"
	for _, tt := range []struct{ store, says string }{
		{`{"kind":"postgres"}`, `kind "postgres" needs a dsn`},
		{`{"kind":"sqlite","dsn":"postgres://u:` + secret + `@db/x"}`, `dsn is for kind "postgres"`},
		{`{"dsn":"postgres://u:` + secret + `@db/x"}`, `dsn is for kind "postgres"`},
		{`{"kind":"postgres","dsn":"postgres://u:` + secret + `@db/x","sync":"normal"}`, "sync is SQLite's"},
		{`{"kind":"mysql"}`, `kind must be "sqlite" or "postgres", got "mysql"`},
	} {
		t.Run(tt.store, func(t *testing.T) {
			is := is.New(t)
			_, err := config.Parse([]byte(`{"version":1,"server":{"store":` + tt.store + `}}`))
			is.True(err != nil)
			is.True(strings.Contains(err.Error(), tt.says)) // says why
			is.True(!strings.Contains(err.Error(), secret)) // never the dsn
		})
	}
	for _, store := range []string{`{}`, `{"kind":"sqlite","root":"state"}`, `{"kind":"postgres","dsn":"host=/run/postgresql dbname=mcpflow"}`} {
		_, err := config.Parse([]byte(`{"version":1,"server":{"store":` + store + `}}`))
		is.New(t).NoErr(err) // a kind with what it takes
	}
}
