// Package layers owns the test that keeps the module's layering as
// docs/architecture.md draws it: nothing under actors/ imports api/, and
// the edge (api/edge) reaches no handler package, only the framing, the
// contract, the method table's shape and access. It holds no code of its
// own; the rules are checked on the import graph `go list` reports.
package layers
