package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// DefaultMaxBatch is the batch size limit transports should pass to [DecodeFrame]
// unless configured otherwise.
const DefaultMaxBatch = 100

// Frame is one decoded transport message.
type Frame struct {
	// Batch reports whether the frame was a JSON array, so the reply must be an array too.
	Batch bool
	// Entries are the frame's entries in frame order: the well-formed calls and
	// notifications, and a ready-made error response for each entry that was not a
	// valid request. A frame rejected as a whole has one rejected entry and Batch false.
	// Notifications dropped by the rules (to reserved "rpc." names) are left out.
	Entries []Entry
}

// Entry is one entry of a frame: a request to answer, or, when Rejected is set, the
// error response that answers an entry which was not a valid request.
type Entry struct {
	Request  Request
	Rejected *Response
}

// Requests returns the frame's valid requests, in frame order.
func (f Frame) Requests() []Request {
	var out []Request
	for _, e := range f.Entries {
		if e.Rejected == nil {
			out = append(out, e.Request)
		}
	}
	return out
}

// Rejected returns the ready-made responses of the frame's invalid entries, in frame order.
func (f Frame) Rejected() []Response {
	var out []Response
	for _, e := range f.Entries {
		if e.Rejected != nil {
			out = append(out, *e.Rejected)
		}
	}
	return out
}

// DecodeFrame decodes one frame holding a single request or a batch, applying the
// JSON-RPC 2.0 rules:
//
//   - invalid JSON, or bytes that are not valid UTF-8 anywhere in the frame: one -32700
//     with id null, and no requests;
//   - an empty batch, or a batch longer than maxBatch: one -32600 with id null (not an array);
//     maxBatch < 1 rejects every batch;
//   - an entry that is not an object, or whose jsonrpc, id, method or params is malformed
//     (an id longer than [MaxIDBytes] included): a -32600 for that entry, echoing its id
//     when the id itself was readable, else null;
//   - a call to a reserved "rpc." method other than rpc.discover: a -32601 (a notification to
//     one is dropped).
//
// Calls sharing an id within one batch are all kept: the specification does not forbid
// it, and each is answered, the reply keeping the frame order so a client can tell them
// apart. A "params": null member is treated as absent. Valid entries are kept, so one bad
// entry does not spoil a batch.
//
// The frame is parsed once: its members, and each batch entry's, are read
// in the one pass that also checks the JSON (json.Unmarshal's own), with
// the params kept as raw bytes for the method's own decode; only a frame
// that is neither an object nor an array is checked on its own.
func DecodeFrame(data []byte, maxBatch int) Frame {
	if !utf8.Valid(data) {
		return rejectFrame(ParseError, "frame is not valid UTF-8")
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case len(trimmed) > 0 && trimmed[0] == '{':
		var members map[string]json.RawMessage // exact, case-sensitive member names
		if err := json.Unmarshal(trimmed, &members); err != nil {
			return rejectFrame(ParseError, "frame is not valid JSON") // an object always fits the map
		}
		var f Frame
		f.add(decodeEntry(members))
		return f
	case len(trimmed) > 0 && trimmed[0] == '[':
		// An entry that is not an object is left nil, and answered on its
		// own; only a syntax error spoils the frame.
		var entries []map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &entries); err != nil {
			if _, syntax := errors.AsType[*json.SyntaxError](err); syntax {
				return rejectFrame(ParseError, "frame is not valid JSON")
			}
		}
		switch {
		case maxBatch < 1:
			return rejectFrame(InvalidRequest, "batch requests are not supported")
		case len(entries) == 0:
			return rejectFrame(InvalidRequest, "empty batch")
		case len(entries) > maxBatch:
			return rejectFrame(InvalidRequest, "batch too large: %d entries, limit %d", len(entries), maxBatch)
		}
		f := Frame{Batch: true, Entries: make([]Entry, 0, len(entries))}
		for _, members := range entries {
			f.add(decodeEntry(members))
		}
		return f
	case !json.Valid(trimmed):
		return rejectFrame(ParseError, "frame is not valid JSON")
	default: // a scalar or null
		var f Frame
		f.add(decodeEntry(nil))
		return f
	}
}

// rejectFrame returns a frame answered as a whole by one error with id null.
func rejectFrame(code int, format string, args ...any) Frame {
	resp := NewError(NullID, Errorf(code, format, args...))
	return Frame{Entries: []Entry{{Rejected: &resp}}}
}

// add keeps a decoded entry: a request, an error response, or nothing (a dropped notification).
func (f *Frame) add(req *Request, rejected *Response) {
	switch {
	case rejected != nil:
		f.Entries = append(f.Entries, Entry{Rejected: rejected})
	case req != nil:
		f.Entries = append(f.Entries, Entry{Request: *req})
	}
}

// decodeEntry checks one request object, given by its members (nil for
// an entry that is not an object). It returns the request, an error
// response for it, or neither when a notification is dropped.
func decodeEntry(members map[string]json.RawMessage) (*Request, *Response) {
	if members == nil {
		return reject(NullID, InvalidRequest, "request must be a JSON object")
	}
	req := Request{JSONRPC: Version}
	if raw, ok := members["id"]; ok {
		id, err := parseID(raw)
		if err != nil {
			return reject(NullID, InvalidRequest, "%v", err)
		}
		req.ID = id
	}
	if !isString(members["jsonrpc"], Version) {
		return reject(req.ID, InvalidRequest, `jsonrpc must be "2.0"`)
	}
	if err := json.Unmarshal(members["method"], &req.Method); err != nil || req.Method == "" {
		return reject(req.ID, InvalidRequest, "method must be a non-empty string")
	}
	if raw := members["params"]; len(raw) > 0 && string(raw) != "null" {
		if raw[0] != '{' && raw[0] != '[' {
			return reject(req.ID, InvalidRequest, "params must be an object or an array")
		}
		req.Params = raw
	}
	if strings.HasPrefix(req.Method, "rpc.") && req.Method != MethodDiscover {
		if req.IsNotification() {
			return nil, nil // a well-formed notification: dropped unanswered
		}
		return reject(req.ID, MethodNotFound, "method %q is reserved", req.Method)
	}
	return &req, nil
}

// reject returns the error response for an entry. A malformed entry is answered even without
// an id (the spec cannot tell it is a notification), with id null.
func reject(id ID, code int, format string, args ...any) (*Request, *Response) {
	if id.IsZero() {
		id = NullID
	}
	resp := NewError(id, Errorf(code, format, args...))
	return nil, &resp
}

// isString reports whether raw is a JSON string that decodes to want.
func isString(raw json.RawMessage, want string) bool {
	var s string
	return len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil && s == want
}

// EncodeReply encodes the responses to one frame: an array for a batch, a single object
// otherwise (a frame that is not a batch has at most one response). It returns nil when there
// is nothing to send, as for a frame of notifications only. Ids are echoed byte for byte.
func EncodeReply(batch bool, responses []Response) ([]byte, error) {
	switch {
	case len(responses) == 0:
		return nil, nil
	case batch:
		return encode(responses)
	default:
		return encode(responses[0])
	}
}

// EncodeResponse encodes one response as [EncodeReply] would, for transports that
// encode each entry of a batch as it finishes and join them with [JoinReply].
// A result that is valid JSON is copied in as it is, without being encoded again.
func EncodeResponse(r Response) ([]byte, error) {
	if r.Error != nil || len(r.Result) == 0 || !r.checked && !(json.Valid(r.Result) && utf8.Valid(r.Result)) {
		return encode(r)
	}
	id := r.ID.String()
	if r.ID.IsZero() {
		id = "null"
	}
	out := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"result":}`)+len(id)+len(r.Result))
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"result":`...)
	out = append(out, r.Result...)
	return append(out, '}'), nil
}

// JoinReply joins responses encoded by [EncodeResponse] into the reply to one frame:
// an array for a batch, the single response otherwise, nil when there is none.
func JoinReply(batch bool, encoded [][]byte) []byte {
	switch {
	case len(encoded) == 0:
		return nil
	case !batch:
		return encoded[0]
	}
	n := 1
	for _, e := range encoded {
		n += len(e) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, e := range encoded {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e...)
	}
	return append(out, ']')
}
