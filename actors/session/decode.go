package session

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	fastjson "github.com/segmentio/encoding/json"
)

// decodeMessage decodes one JSON-RPC message as jsonrpc.DecodeMessage
// does, with the same decoder (segmentio's, its fields matched case
// sensitively, its nesting bounded), but parsing data where it is:
// go-sdk's reads data again through a decoder of its own, whose buffer
// (32 KiB at least, twice for a request, whose method is decoded on its
// own) was most of the bytes a call allocated. Its Params, Result and
// error Data are copies: data may be reused once it returns.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	if err := checkDepth(data); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	return decodeNested(data)
}

// decodeNested is decodeMessage for data whose nesting is known to be
// within maxDepth.
func decodeNested(data []byte) (jsonrpc.Message, error) {
	var msg struct {
		VersionTag string          `json:"jsonrpc"`
		ID         any             `json:"id,omitempty"`
		Method     json.RawMessage `json:"method"` // present (even "") or not
		Params     json.RawMessage `json:"params,omitempty"`
		Result     json.RawMessage `json:"result,omitempty"`
		Error      *jsonrpc.Error  `json:"error,omitempty"`
	}
	if err := parse(data, &msg); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if msg.VersionTag != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", msg.VersionTag, "2.0")
	}
	id, err := jsonrpc.MakeID(msg.ID)
	if err != nil {
		return nil, err
	}
	if len(msg.Method) > 0 {
		var method string
		if err := parse(msg.Method, &method); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: msg.Params}, nil
	}
	if !id.IsValid() {
		return nil, errInvalidMessage
	}
	resp := &jsonrpc.Response{ID: id, Result: msg.Result}
	if msg.Error != nil {
		resp.Error = msg.Error // not a nil *jsonrpc.Error in an error
	}
	return resp, nil
}

// errInvalidMessage is a message that is neither a request nor an
// answer to one (go-sdk's jsonrpc2.ErrInvalidRequest, which it does not
// export).
var errInvalidMessage = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"}

// parse decodes data, one JSON value and nothing after it, into v.
func parse(data []byte, v any) error {
	rest, err := fastjson.Parse(data, v, fastjson.DontMatchCaseInsensitiveStructFields)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return err
}

// maxDepth bounds the nesting of a message, as go-sdk's decoder does.
const maxDepth = 1000

var errTooDeep = fmt.Errorf("json: exceeded maximum nesting depth of %d", maxDepth)

// checkDepth reports errTooDeep when objects and arrays nest in data
// deeper than maxDepth (go-sdk's check, before a parser that recurses).
func checkDepth(data []byte) error {
	var n nesting
	return n.feed(data)
}

// nesting follows how deep a JSON text fed to it in parts is, in objects
// and arrays, outside its strings.
type nesting struct {
	depth             int
	inString, escaped bool
}

// feed takes the next part, failing with errTooDeep past maxDepth.
func (n *nesting) feed(data []byte) error {
	for _, b := range data {
		switch {
		case n.inString && n.escaped:
			n.escaped = false
		case n.inString:
			n.escaped, n.inString = b == '\\', b != '"'
		case b == '"':
			n.inString = true
		case b == '{' || b == '[':
			if n.depth++; n.depth > maxDepth {
				return errTooDeep
			}
		case b == '}' || b == ']':
			n.depth = max(n.depth-1, 0)
		}
	}
	return nil
}

// open reports whether what was fed is not a whole value yet.
func (n *nesting) open() bool { return n.depth > 0 || n.inString }
