// Package sqlitetest opens real SQLite stores for tests and benchmarks:
// a new database in the test's temporary directory, closed when the test
// ends. Only tests use it.
package sqlitetest

import (
	"path/filepath"
	"testing"

	"github.com/mcpflow/mcpflow/actors/store/sqlite"
)

// Open opens a store on a new database in tb's temporary directory, with
// opts, and closes it when tb ends; it fails tb if either fails.
func Open(tb testing.TB, opts ...sqlite.Option) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(tb.Context(), filepath.Join(tb.TempDir(), "mcpflow.db"), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}
