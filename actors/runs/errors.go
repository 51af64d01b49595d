package runs

import (
	"errors"
	"fmt"
)

// ErrShuttingDown refuses what would start a run once the Manager stops
// accepting runs (StopAccepting).
var ErrShuttingDown = errors.New("mcpflow is shutting down; retry once it is back")

// ErrNotMember refuses a start or a resume on a node of a cluster whose
// membership lapsed (it was paused, or cut off from the database, past
// its lease's ttl) and which did not rejoin within the wait (asMember):
// nothing was created or resumed, and the request may be retried.
var ErrNotMember = errors.New("this node's cluster membership lapsed and it has not rejoined the cluster yet: " +
	"no run was started or resumed; retry, on this node or another")

// Kind is what an Error says of a request.
type Kind int

const (
	// Invalid: a value of the request, or the state of what it names, is
	// not acceptable (a run that is not interrupted, a subgraph cycle).
	Invalid Kind = iota + 1
	// InvalidParams: the request's params are wrong (a workflow input
	// that does not match its schema, a refused resume payload).
	InvalidParams
	// Upstream: a run could not be committed or started.
	Upstream
)

// Error is a failure the Manager reports to the caller as it is: Message
// is written for the client.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return e.Message }

func failure(kind Kind, format string, args ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) error { return failure(Invalid, format, args...) }

func invalidParams(format string, args ...any) error {
	return failure(InvalidParams, format, args...)
}

// StoreError is a store failure reading or writing What (a record named
// for the client: `workflow run "run_1"`). It wraps the store's error, so
// that errors.Is(err, store.ErrNotFound) holds.
type StoreError struct {
	What string
	Err  error
}

func (e *StoreError) Error() string { return e.What + ": " + e.Err.Error() }

func (e *StoreError) Unwrap() error { return e.Err }

func storeErr(err error, what string) error { return &StoreError{What: what, Err: err} }
