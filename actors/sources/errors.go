package sources

import (
	"errors"
	"fmt"
)

// The kinds of failure the package returns; test them with errors.Is.
// Every error it returns from an operation is of one kind, with a message
// fit to show a client (no secret).
var (
	// ErrMalformed is a request the operation cannot read: a missing
	// source id, an entry document that does not parse.
	ErrMalformed = errors.New("sources: malformed request")
	// ErrUnknown names a registry entry that does not exist.
	ErrUnknown = errors.New("sources: unknown source")
	// ErrRefused is a well-formed request the rules refuse: a duplicate
	// or reserved id, an entry the config locks.
	ErrRefused = errors.New("sources: refused")
	// ErrFailed is a failure of what the package relies on: the store,
	// the supervisor.
	ErrFailed = errors.New("sources: failed")
)

// failure is an error of one kind; its message is its cause's.
type failure struct {
	kind  error
	cause error
}

func (f *failure) Error() string        { return f.cause.Error() }
func (f *failure) Unwrap() error        { return f.cause }
func (f *failure) Is(target error) bool { return target == f.kind }

// fail returns an error of kind whose message is format's (%w wraps).
func fail(kind error, format string, args ...any) error {
	return &failure{kind: kind, cause: fmt.Errorf(format, args...)}
}
