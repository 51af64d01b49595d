package sqlite

import (
	"database/sql/driver"
	"fmt"
	"strings"

	"modernc.org/sqlite"
)

// foldSQL is the SQL name of fold.
const foldSQL = "mcpflow_fold"

// SQLite's lower() folds ASCII letters only. Artifact queries fold with Go
// instead, as the in-memory store does, so that both match alike.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction(foldSQL, 1, fold)
}

// fold lower-cases a text value; NULL stays NULL.
func fold(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	switch v := args[0].(type) {
	case nil:
		return nil, nil
	case string:
		return strings.ToLower(v), nil
	default:
		return nil, fmt.Errorf("%s: want text, got %T", foldSQL, v)
	}
}
