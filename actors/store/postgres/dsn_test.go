package postgres_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store/postgres"
)

const password = "pw-7f3a9c"

func TestShowDSN(t *testing.T) {
	for _, tt := range []struct{ dsn, want string }{
		{"postgres://app:" + password + "@db.example.com:6432/mcpflow?sslmode=require&password=" + password,
			"postgres://app@db.example.com:6432/mcpflow"},
		{"host=/run/postgresql port=5433 user=app password=" + password + " dbname=mcpflow",
			"postgres://app@/mcpflow?host=%2Frun%2Fpostgresql&port=5433"},
		{"host=127.0.0.1 user=app password='" + password + " x' dbname=mcpflow", "postgres://app@127.0.0.1:5432/mcpflow"},
		{"postgres://app:" + password + "@db:notaport/mcpflow", "[invalid dsn]"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			is := is.New(t)
			is.Equal(postgres.ShowDSN(tt.dsn), tt.want)
		})
	}
}

// TestOpenErrorsHideThePassword opens stores that cannot be opened: the
// errors say why, and never with the password.
func TestOpenErrorsHideThePassword(t *testing.T) {
	for _, tt := range []struct{ name, dsn, says string }{
		{"unparsable", "postgres://app:" + password + "@db:notaport/mcpflow", "not a PostgreSQL connection string"},
		{"unreachable", "postgres://app:" + password + "@127.0.0.1:1/mcpflow?connect_timeout=5", "postgres://app@127.0.0.1:1/mcpflow"},
		{"bad parameter", "host=127.0.0.1 port=1 password=" + password + " sslmode=" + password, "not a PostgreSQL connection string"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			_, err := postgres.Open(t.Context(), tt.dsn)
			is.True(err != nil)
			is.True(strings.Contains(err.Error(), tt.says))   // says why
			is.True(!strings.Contains(err.Error(), password)) // never the password
		})
	}
}
