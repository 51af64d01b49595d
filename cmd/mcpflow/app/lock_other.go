//go:build !unix

package app

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

// lockFile does not lock where flock(2) is missing: mcpflow is built for
// Linux; elsewhere one owner per store is up to the operator.
func lockFile(*os.File) error { return nil }
