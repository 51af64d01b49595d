package session

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpflow/mcpflow/actors/config"
)

// An upstream's answer is bounded while it is read, before go-sdk holds
// or decodes it: one JSON-RPC message of more than the connection's
// max_result_bytes (resultLimit) is never handed to go-sdk. The HTTP
// transports bound each response body (resultlimit_http.go), the stdio
// transport each line of the server's stdout (resultlimit_stdio.go).
// An oversize message that answers a call is replaced by an error answer
// to that call, made here (tooLargeAnswer), which go-sdk hands to the
// call as it would the server's own: the call fails, the session goes
// on. The session knows that answer by a mark no server can forge
// (asTooLarge), and fails the call with ErrResultTooLarge. An oversize
// message that answers no call (a notification, a request of the
// server's) is dropped.

// codeTooLarge is the JSON-RPC error code of the answer that replaces an
// oversize one.
const codeTooLarge = -32099

// tooLargeMark is in the data of every answer this process made for an
// oversize one: a random value, so that a server cannot pass its own
// error for one.
var tooLargeMark = func() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}()

// tooLargeData is the data of the answer that replaces an oversize one.
type tooLargeData struct {
	Mark  string `json:"mcpflow_result_too_large"`
	Limit int64  `json:"limit"`
}

// resultLimit is the bound on one answer of conn: its max_result_bytes,
// else def (the server's), else config.DefaultMaxResultBytes.
func resultLimit(conn config.Connection, def int64) int64 {
	switch {
	case conn.MaxResultBytes > 0:
		return conn.MaxResultBytes
	case def > 0:
		return def
	}
	return config.DefaultMaxResultBytes
}

// limitSlack is what go-sdk's own bound on a message (an SSE event)
// allows beyond the connection's: the answer made for an
// oversize message must pass it, and ours is the one that holds.
const limitSlack = 64 << 10

// tooLargeAnswer is the JSON-RPC error answer to call id that replaces an
// answer of more than limit bytes.
func tooLargeAnswer(id json.RawMessage, limit int64) []byte {
	data, _ := json.Marshal(tooLargeData{Mark: tooLargeMark, Limit: limit}) // plain strings and numbers
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	fmt.Fprintf(&b, `,"error":{"code":%d,"message":"result_too_large: the answer passed %d bytes","data":`, codeTooLarge, limit)
	b.Write(data)
	b.WriteString("}}")
	return b.Bytes()
}

// asTooLarge reports whether err is an answer tooLargeAnswer made, and
// the limit it names.
func asTooLarge(err error) (limit int64, ok bool) {
	wire, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok || wire.Code != codeTooLarge {
		return 0, false
	}
	var d tooLargeData
	if json.Unmarshal(wire.Data, &d) != nil || d.Mark != tooLargeMark {
		return 0, false
	}
	return d.Limit, true
}

// tooLargeError is the error of a call whose answer from connection
// passed limit bytes: ErrResultTooLarge, naming the source, the limit and
// how to raise it.
func tooLargeError(connection string, limit int64) error {
	return fmt.Errorf("%w: the answer of source %q passed its limit of %d bytes (max_result_bytes); raise the source's max_result_bytes, or server.limits.max_result_bytes, to accept larger answers",
		ErrResultTooLarge, connection, limit)
}

// answerTooLarge turns rpcErr, a request's error on a session of
// connection, into the call's error: ErrResultTooLarge for the answer
// made in place of an oversize one, which leaves the session as it was
// (rpcErr nil: the session answered), else rpcErr itself.
func answerTooLarge(rpcErr error, connection string) (err, sessionErr error) {
	if limit, ok := asTooLarge(rpcErr); ok {
		return tooLargeError(connection, limit), nil
	}
	return rpcErr, rpcErr
}
