package records

import "fmt"

// Error is an artifact the rules refuse; Message is written for the
// client. Malformed says the request's params are wrong (an outcome list
// with a blank, a requirement with no ref); otherwise a value of the
// request or the state of what it names is not acceptable.
type Error struct {
	Malformed bool
	Message   string
}

func (e *Error) Error() string { return e.Message }

func malformed(format string, args ...any) error {
	return &Error{Malformed: true, Message: fmt.Sprintf(format, args...)}
}

func refused(format string, args ...any) error {
	return &Error{Message: fmt.Sprintf(format, args...)}
}

// StoreError is a store failure reading or writing What (a record named
// for the client: `artifact "a" version 1`). It wraps the store's error,
// so that errors.Is(err, store.ErrNotFound) holds.
type StoreError struct {
	What string
	Err  error
}

func (e *StoreError) Error() string { return e.What + ": " + e.Err.Error() }

func (e *StoreError) Unwrap() error { return e.Err }
