package app

import (
	"context"
	"errors"
)

// undoStack is what Start has built so far, each part with how to undo
// it: a stage pushes its undo once its part stands, and a stage that
// fails unwinds the stack, the last part built first.
type undoStack []func(context.Context) error

// push adds the undo of the part just built.
func (u *undoStack) push(undo func(context.Context) error) { *u = append(*u, undo) }

// unwind undoes every part, in reverse order of building, and empties the
// stack; it returns every undo's error.
func (u *undoStack) unwind(ctx context.Context) error {
	var errs []error
	for i := len(*u) - 1; i >= 0; i-- {
		errs = append(errs, (*u)[i](ctx))
	}
	*u = nil
	return errors.Join(errs...)
}
