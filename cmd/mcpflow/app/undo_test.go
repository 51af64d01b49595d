package app

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"
)

// TestUndoUnwindsInReverse: the parts a failed start built are undone
// last first, every undo runs even after one fails, and each error is
// returned; the stack is empty after.
func TestUndoUnwindsInReverse(t *testing.T) {
	is := is.New(t)
	var undo undoStack
	var order []string
	errSupervisor := errors.New("supervisor did not stop")
	for _, part := range []string{"store", "hub", "supervisor", "tracer"} {
		undo.push(func(context.Context) error {
			order = append(order, part)
			if part == "supervisor" {
				return errSupervisor
			}
			return nil
		})
	}
	err := undo.unwind(context.Background())
	is.Equal(order, []string{"tracer", "supervisor", "hub", "store"})
	is.True(errors.Is(err, errSupervisor))
	is.Equal(len(undo), 0)
	is.NoErr(undo.unwind(context.Background())) // nothing left to undo
}
