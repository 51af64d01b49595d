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
