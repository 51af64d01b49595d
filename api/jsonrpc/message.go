package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Version is the only protocol version this package speaks.
const Version = "2.0"

// Request is one call or notification. Params holds the raw "params" member (an object or an
// array), or nil when it was absent or null.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      ID              `json:"id,omitzero"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// IsNotification reports whether the request has no id and so must never be answered.
func (r Request) IsNotification() bool { return r.ID.IsZero() }

// Response answers one call. It carries exactly one of Result and Error: when Error is set,
// Result is ignored; otherwise a nil Result is written as null.
//
// Encode responses with [EncodeReply]: json.Marshal would escape <, > and & and so change
// the bytes of an echoed id.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      ID              `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
	// checked reports that Result is known to be valid JSON in valid UTF-8
	// (NewResult made it), so encoding copies it without checking it again.
	checked bool
}

// Encoded is a result already encoded: valid JSON text in valid UTF-8,
// which [NewResult] takes as it is, unchecked and uncopied, so that a
// large result served again and again (the OpenRPC document) costs one
// copy per reply. It must not change once handed over.
type Encoded []byte

// NewResult returns a success response carrying v encoded as JSON. A v
// that is already valid JSON (json.RawMessage) is kept as it is, not
// copied: it must not change afterwards.
func NewResult(id ID, v any) (Response, error) {
	if enc, ok := v.(Encoded); ok && len(enc) > 0 {
		return Response{JSONRPC: Version, ID: id, Result: json.RawMessage(enc), checked: true}, nil
	}
	if raw, ok := v.(json.RawMessage); ok && len(raw) > 0 {
		if json.Valid(raw) && utf8.Valid(raw) {
			return Response{JSONRPC: Version, ID: id, Result: raw, checked: true}, nil
		}
		// Decoded and encoded again: invalid UTF-8 becomes U+FFFD, so the
		// reply stays valid UTF-8.
		var decoded any
		if err := json.Unmarshal(raw, &decoded); err != nil {
			return Response{}, fmt.Errorf("jsonrpc: result for id %s: %w", id, err)
		}
		v = decoded
	}
	result, err := encode(v)
	if err != nil {
		return Response{}, fmt.Errorf("jsonrpc: encode result for id %s: %w", id, err)
	}
	return Response{JSONRPC: Version, ID: id, Result: result, checked: true}, nil
}

// NewError returns an error response. A nil e becomes a bare -32603 "Internal error",
// so a response always carries something.
func NewError(id ID, e *Error) Response {
	if e == nil {
		e = &Error{Code: InternalError, Message: Message(InternalError)}
	}
	return Response{JSONRPC: Version, ID: id, Error: e}
}

// MarshalJSON writes {"jsonrpc":"2.0","id":…} plus either "error" or "result", never both.
func (r Response) MarshalJSON() ([]byte, error) {
	if r.Error != nil {
		return encode(struct {
			JSONRPC string `json:"jsonrpc"`
			ID      ID     `json:"id"`
			Error   *Error `json:"error"`
		}{Version, r.ID, r.Error})
	}
	result := r.Result
	if len(result) == 0 {
		result = json.RawMessage("null")
	}
	return encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      ID              `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{Version, r.ID, result})
}

// encode marshals v without HTML escaping, so raw ids and results keep their bytes.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// MethodDiscover is the one reserved "rpc." method served: OpenRPC's
// service discovery.
const MethodDiscover = "rpc.discover"

// EncodeNotification encodes a server-to-client notification: a request
// without an id, params v encoded as JSON (nil: no params).
func EncodeNotification(method string, v any) ([]byte, error) {
	req := Request{JSONRPC: Version, Method: method}
	if v != nil {
		params, err := encode(v)
		if err != nil {
			return nil, fmt.Errorf("jsonrpc: encode params of %s: %w", method, err)
		}
		req.Params = params
	}
	return encode(req)
}
