package jsonrpc

import (
	"errors"
	"fmt"
	"strconv"
)

// ID is a request id exactly as the client spelled it: a JSON string, a JSON number (0 included)
// or null. Responses echo the same bytes, so clients can match them whatever their number or
// string handling. The zero ID means "absent": a request without an id is a notification.
//
// IDs are comparable with ==; two ids are equal when they are spelled the same way
// (so "1" and 1, or 1 and 1.0, are different ids).
type ID struct {
	raw string // the JSON token; "" when absent
}

// NullID is the explicit JSON null id, used in errors for requests whose id could not be read.
var NullID = ID{raw: "null"}

// StringID returns the id for a string.
func StringID(s string) ID {
	b, _ := encode(s) // encoding a string cannot fail
	return ID{raw: string(b)}
}

// IntID returns the id for an integer.
func IntID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// MaxIDBytes caps the JSON text of an id: every reply echoes it, so it is kept short.
// An entry with a longer id is answered -32600 with id null.
const MaxIDBytes = 1024

// errBadID reports an id that is neither a string, a number nor null.
var errBadID = errors.New("id must be a string, a number or null")

// errLongID reports an id longer than MaxIDBytes.
var errLongID = fmt.Errorf("id must be at most %d bytes of JSON", MaxIDBytes)

// parseID checks one JSON value (already known to be valid JSON) and keeps its bytes.
func parseID(raw []byte) (ID, error) {
	if len(raw) == 0 {
		return ID{}, errBadID
	}
	if len(raw) > MaxIDBytes {
		return ID{}, errLongID
	}
	switch c := raw[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return ID{raw: string(raw)}, nil
	case string(raw) == "null":
		return NullID, nil
	default:
		return ID{}, errBadID
	}
}

// IsZero reports whether the id is absent, which makes the request a notification.
func (id ID) IsZero() bool { return id.raw == "" }

// IsNull reports whether the id is an explicit JSON null.
func (id ID) IsNull() bool { return id.raw == "null" }

// String returns the id as JSON text, or "" when it is absent.
func (id ID) String() string { return id.raw }

// MarshalJSON writes the id exactly as received; an absent id is written as null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.IsZero() {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON keeps the id's bytes; it rejects objects, arrays and booleans.
func (id *ID) UnmarshalJSON(data []byte) error {
	parsed, err := parseID(data)
	if err != nil {
		return err
	}
	*id = parsed
	return nil
}
