package sqlite

import (
	"fmt"
	"strings"
)

// foldSQL is the SQL name of fold.
const foldSQL = "mcpflow_fold"

// fold lower-cases a text value; NULL stays NULL. SQLite's lower() folds
// ASCII letters only: artifact queries fold with Go instead, as the
// in-memory store does, so that both match alike.
func fold(arg any) (any, error) {
	switch v := arg.(type) {
	case nil:
		return nil, nil
	case string:
		return strings.ToLower(v), nil
	default:
		return nil, fmt.Errorf("%s: want text, got %T", foldSQL, v)
	}
}
