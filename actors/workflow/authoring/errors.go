// Package authoring owns the editing of draft workflow documents: each
// operation takes a document, its params and a capability lookup, and
// answers the next document or says why it refuses the edit. The language
// rules of authoring live here: which outcomes a step may be routed on
// (and that add_step_from_capability covers exactly a capability's
// outcomes), how a binding is checked against a capability's schemas, and
// how bind projects those schemas into the workflow's own. So do the
// JSON Patch of a whole draft and the check and compile of a document
// against the live capabilities.
//
// An operation never changes the document it is given and never stores
// anything: revisions, compare-and-set and the API's projection belong to
// the caller.
package authoring

import "fmt"

// Kind says why an operation refused an edit.
type Kind int

const (
	// Malformed params are wrong by themselves, whatever the document
	// holds (the API's invalid params).
	Malformed Kind = iota + 1
	// Invalid params do not fit the document or the capability.
	Invalid
	// NotFound params name a step or a capability that does not exist.
	NotFound
)

// Error is an operation's refusal: its kind and what to tell the author.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return e.Message }

func malformed(format string, args ...any) error {
	return &Error{Kind: Malformed, Message: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) error {
	return &Error{Kind: Invalid, Message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &Error{Kind: NotFound, Message: fmt.Sprintf(format, args...)}
}
