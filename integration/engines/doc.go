// Package engines compares storage engines for mcpflow's run commits
// (issue 32, item 6): the SQLite store (actors/store/sqlite) on
// modernc.org/sqlite, as mcpflow ships it, and on mattn/go-sqlite3, a cgo
// build of SQLite, with the store's own code either way (CgoDriver); and
// an append-only journal in Pebble (PebbleJournal) for a run's step
// commits alone. The workload is what a warm one-step run hands its store
// (Workload), captured from a real run.
//
// It is a Go module of its own, so that neither cgo nor Pebble is a
// dependency of mcpflow: `go run ./cmd/mcpflow` needs no C compiler, and
// the repository's `go test ./...` does not reach this module. See
// README.md for how to run it.
package engines
