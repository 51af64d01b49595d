package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/matryer/is"
)

// answer is what one entry of a reply must be: its id (JSON text) and
// code (0 for a result).
type answer struct {
	id   string
	code int
}

// expect is what a frame must get: nothing at all, one response, a batch
// reply (an array, in frame order), or, for a frame over the size limit,
// close 1009 over /ws and 413 over /rpc.
type expect struct {
	none    bool
	single  *answer
	batch   []answer
	tooBig  bool
	comment string
}

func result(id string) expect            { return expect{single: &answer{id: id}} }
func failure(code int, id string) expect { return expect{single: &answer{id: id, code: code}} }
func noReply() expect                    { return expect{none: true} }
func batchReply(entries ...answer) expect {
	return expect{batch: entries}
}

// complianceCase is one malformed or edge-case frame.
type complianceCase struct {
	name  string
	frame string
	want  expect
}

const (
	parseErr  = -32700
	invalidRq = -32600
	noMethod  = -32601
	badParams = -32602
	domainErr = 5000
)

// complianceCases are the JSON-RPC 2.0 specification's examples (section
// 7, with its methods unknown here) and every edge case the edge decides.
func complianceCases() []complianceCase {
	const health = `"jsonrpc":"2.0","method":"workflow.health"`
	longID := `"` + strings.Repeat("i", 1022) + `"` // 1,024 bytes of JSON: the limit
	deep := strings.Repeat("[", 500) + strings.Repeat("]", 500)
	hundred := make([]string, 100)
	for i := range hundred {
		hundred[i] = fmt.Sprintf(`{%s,"id":%d}`, health, i)
	}
	hundredAnswers := make([]answer, 100)
	for i := range hundredAnswers {
		hundredAnswers[i] = answer{id: fmt.Sprint(i)}
	}
	return []complianceCase{
		// The specification's examples.
		{"spec: positional params", `{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}`, failure(noMethod, "1")},
		{"spec: positional params 2", `{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}`, failure(noMethod, "2")},
		{"spec: named params", `{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}`, failure(noMethod, "3")},
		{"spec: notification", `{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}`, noReply()},
		{"spec: notification without params", `{"jsonrpc": "2.0", "method": "foobar"}`, noReply()},
		{"spec: non-existent method", `{"jsonrpc": "2.0", "method": "foobar", "id": "1"}`, failure(noMethod, `"1"`)},
		{"spec: invalid JSON", `{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]`, failure(parseErr, "null")},
		{"spec: invalid Request object", `{"jsonrpc": "2.0", "method": 1, "params": "bar"}`, failure(invalidRq, "null")},
		{"spec: batch, invalid JSON", `[
  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
  {"jsonrpc": "2.0", "method"
]`, failure(parseErr, "null")},
		{"spec: empty array", `[]`, failure(invalidRq, "null")},
		{"spec: invalid batch, not empty", `[1]`, batchReply(answer{"null", invalidRq})},
		{"spec: invalid batch", `[1,2,3]`, batchReply(answer{"null", invalidRq}, answer{"null", invalidRq}, answer{"null", invalidRq})},
		{"spec: mixed batch", `[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ]`, batchReply(answer{`"1"`, noMethod}, answer{`"2"`, noMethod}, answer{"null", invalidRq}, answer{`"5"`, noMethod}, answer{`"9"`, noMethod})},
		{"spec: batch of notifications", `[
        {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}
    ]`, noReply()},

		// Calls that succeed, and the ids they echo byte for byte.
		{"a call", `{` + health + `,"id":1}`, result("1")},
		{"empty params", `{` + health + `,"id":1,"params":{}}`, result("1")},
		{"null params count as absent", `{` + health + `,"id":1,"params":null}`, result("1")},
		{"extra members are ignored", `{` + health + `,"id":1,"extra":true}`, result("1")},
		{"a repeated member: the last wins", `{"jsonrpc":"2.0","method":"nope","method":"workflow.health","id":1}`, result("1")},
		{"rpc.discover", `{"jsonrpc":"2.0","method":"rpc.discover","id":1}`, result("1")},
		{"a domain error", `{"jsonrpc":"2.0","method":"workflow.runs.start","params":{"deployment_id":"missing"},"id":1}`, failure(domainErr, "1")},
		{"id: string", `{` + health + `,"id":"abc"}`, result(`"abc"`)},
		{"id: empty string", `{` + health + `,"id":""}`, result(`""`)},
		{"id: escapes and HTML characters", `{` + health + `,"id":"\u00e9<&>"}`, result(`"\u00e9<&>"`)},
		{"id: zero", `{` + health + `,"id":0}`, result("0")},
		{"id: negative", `{` + health + `,"id":-1}`, result("-1")},
		{"id: null", `{` + health + `,"id":null}`, result("null")},
		{"id: fractional", `{` + health + `,"id":1.5}`, result("1.5")},
		{"id: exponent", `{` + health + `,"id":1e400}`, result("1e400")},
		{"id: huge number", `{` + health + `,"id":123456789012345678901234567890}`, result("123456789012345678901234567890")},
		{"id: at the length limit", `{` + health + `,"id":` + longID + `}`, result(longID)},
		{"id: over the length limit", `{` + health + `,"id":"` + strings.Repeat("i", 1024) + `"}`, failure(invalidRq, "null")},
		{"id: object", `{` + health + `,"id":{"a":1}}`, failure(invalidRq, "null")},
		{"id: array", `{` + health + `,"id":[1]}`, failure(invalidRq, "null")},
		{"id: boolean", `{` + health + `,"id":true}`, failure(invalidRq, "null")},

		// The jsonrpc member.
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","method":"workflow.health","id":1}`, failure(invalidRq, "1")},
		{"jsonrpc missing", `{"method":"workflow.health","id":1}`, failure(invalidRq, "1")},
		{"jsonrpc a number", `{"jsonrpc":2.0,"method":"workflow.health","id":1}`, failure(invalidRq, "1")},
		{"jsonrpc with a space", `{"jsonrpc":"2.0 ","method":"workflow.health","id":1}`, failure(invalidRq, "1")},
		{"member names are case-sensitive", `{"JSONRPC":"2.0","METHOD":"workflow.health","id":1}`, failure(invalidRq, "1")},
		{"a malformed notification is answered", `{"jsonrpc":"1.0","method":"workflow.health"}`, failure(invalidRq, "null")},

		// The method member.
		{"method missing", `{"jsonrpc":"2.0","id":1}`, failure(invalidRq, "1")},
		{"method empty", `{"jsonrpc":"2.0","method":"","id":1}`, failure(invalidRq, "1")},
		{"method null", `{"jsonrpc":"2.0","method":null,"id":1}`, failure(invalidRq, "1")},
		{"method a number", `{"jsonrpc":"2.0","method":7,"id":1}`, failure(invalidRq, "1")},
		{"method unknown", `{"jsonrpc":"2.0","method":"workflow.nope","id":1}`, failure(noMethod, "1")},
		{"method names are case-sensitive", `{"jsonrpc":"2.0","method":"Workflow.Health","id":1}`, failure(noMethod, "1")},
		{"unknown method, notification", `{"jsonrpc":"2.0","method":"workflow.nope"}`, noReply()},
		{"reserved rpc. name", `{"jsonrpc":"2.0","method":"rpc.other","id":1}`, failure(noMethod, "1")},
		{"reserved rpc. name, notification", `{"jsonrpc":"2.0","method":"rpc.other"}`, noReply()},

		// The params member.
		{"params a string", `{` + health + `,"id":1,"params":"bar"}`, failure(invalidRq, "1")},
		{"params a number", `{` + health + `,"id":1,"params":3}`, failure(invalidRq, "1")},
		{"params a boolean", `{` + health + `,"id":1,"params":true}`, failure(invalidRq, "1")},
		{"params an array where the contract wants an object", `{` + health + `,"id":1,"params":[]}`, failure(badParams, "1")},
		{"params with an unknown key", `{` + health + `,"id":1,"params":{"verbose":true}}`, failure(badParams, "1")},
		{"params missing a required key", `{"jsonrpc":"2.0","method":"workflow.runs.start","id":1,"params":{}}`, failure(badParams, "1")},
		{"params with an empty value", `{"jsonrpc":"2.0","method":"workflow.runs.start","id":1,"params":{"deployment_id":""}}`, failure(badParams, "1")},
		{"params with a value of the wrong type", `{"jsonrpc":"2.0","method":"workflow.runs.start","id":1,"params":{"deployment_id":5}}`, failure(badParams, "1")},
		{"params nested deep", `{` + health + `,"id":1,"params":{"a":` + deep + `}}`, failure(badParams, "1")},
		{"invalid params, notification", `{` + health + `,"params":{"verbose":true}}`, noReply()},

		// Invalid UTF-8 anywhere.
		{"invalid UTF-8 in an id", "{" + health + ",\"id\":\"\xff\"}", failure(parseErr, "null")},
		{"invalid UTF-8 in a method", "{\"jsonrpc\":\"2.0\",\"method\":\"workflow.health\xc3\",\"id\":1}", failure(parseErr, "null")},
		{"invalid UTF-8 in params", "{" + health + ",\"id\":1,\"params\":{\"k\":\"\xed\xa0\x80\"}}", failure(parseErr, "null")},
		{"invalid UTF-8 in a member name", "{" + health + ",\"id\":1,\"\xfe\":1}", failure(parseErr, "null")},
		{"an overlong UTF-8 encoding", "{" + health + ",\"id\":\"\xc0\xaf\"}", failure(parseErr, "null")},
		{"invalid UTF-8 in one batch entry", "[{" + health + ",\"id\":1},{" + health + ",\"id\":\"\x80\"}]", failure(parseErr, "null")},

		// Batches.
		{"a batch of one", `[{` + health + `,"id":1}]`, batchReply(answer{"1", 0})},
		{"a batch with a notification", `[{` + health + `},{` + health + `,"id":2}]`, batchReply(answer{"2", 0})},
		{"duplicate ids are each answered", `[{` + health + `,"id":1},{` + health + `,"id":1}]`, batchReply(answer{"1", 0}, answer{"1", 0})},
		{"duplicate ids, different outcomes", `[{` + health + `,"id":1},{"jsonrpc":"2.0","method":"nope","id":1}]`, batchReply(answer{"1", 0}, answer{"1", noMethod})},
		{"a string id and a number id differ", `[{` + health + `,"id":1},{` + health + `,"id":"1"}]`, batchReply(answer{"1", 0}, answer{`"1"`, 0})},
		{"a batch of invalid objects", `[{},{"foo":1},null]`, batchReply(answer{"null", invalidRq}, answer{"null", invalidRq}, answer{"null", invalidRq})},
		{"a nested batch", `[[{` + health + `,"id":1}]]`, batchReply(answer{"null", invalidRq})},
		{"a batch mixing every outcome", `[{` + health + `,"id":1},{"jsonrpc":"2.0","method":"nope","id":2},{` + health + `,"id":3,"params":{"x":1}},{"jsonrpc":"1.0","method":"m","id":4},5]`,
			batchReply(answer{"1", 0}, answer{"2", noMethod}, answer{"3", badParams}, answer{"4", invalidRq}, answer{"null", invalidRq})},
		{"a batch at the limit (100)", "[" + strings.Join(hundred, ",") + "]", batchReply(hundredAnswers...)},
		{"a batch over the limit (101)", "[" + strings.Join(hundred, ",") + `,{` + health + `,"id":100}]`, failure(invalidRq, "null")},

		// Frames that are no request at all.
		{"an empty frame", ``, failure(parseErr, "null")},
		{"whitespace only", " \n\t ", failure(parseErr, "null")},
		{"null", `null`, failure(invalidRq, "null")},
		{"a string", `"workflow.health"`, failure(invalidRq, "null")},
		{"a number", `42`, failure(invalidRq, "null")},
		{"an empty object", `{}`, failure(invalidRq, "null")},
		{"trailing garbage", `{` + health + `,"id":1} x`, failure(parseErr, "null")},
		{"two objects in one frame", `{` + health + `,"id":1}{` + health + `,"id":2}`, failure(parseErr, "null")},
		{"a byte order mark", "\xef\xbb\xbf{" + health + `,"id":1}`, failure(parseErr, "null")},
		{"over the message size limit", `{` + health + `,"id":1,"params":{"pad":"` + strings.Repeat("x", 4<<20) + `"}}`, expect{tooBig: true}},
	}
}

// TestEdgeCompliance sends every case over /ws and over /rpc of the real
// edge and checks each reply: whether there is one, its shape, and each
// entry's id and code.
func TestEdgeCompliance(t *testing.T) {
	cases := complianceCases()
	is.New(t).True(len(cases) >= 60)
	svc := startService(t, nil)
	rpcURL := "http://" + strings.TrimSuffix(strings.TrimPrefix(svc.URL, "ws://"), "/ws") + "/rpc"

	t.Run("ws", func(t *testing.T) {
		ws := dialRaw(t, svc.URL)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if tc.want.tooBig {
					big := dialRaw(t, svc.URL)
					sendFrame(t, big, tc.frame)
					_ = big.SetReadDeadline(time.Now().Add(10 * time.Second))
					_, _, err := big.ReadMessage()
					is.New(t).True(websocket.IsCloseError(err, websocket.CloseMessageTooBig)) // close 1009
					return
				}
				sendFrame(t, ws, tc.frame)
				if tc.want.none {
					// The next message must answer the probe sent after.
					sendFrame(t, ws, `{"jsonrpc":"2.0","method":"workflow.health","id":"probe"}`)
					checkReply(t, readFrame(t, ws), result(`"probe"`))
					return
				}
				checkReply(t, readFrame(t, ws), tc.want)
			})
		}
	})
	t.Run("rpc", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				status, body := postFrame(t, rpcURL, tc.frame)
				switch {
				case tc.want.tooBig:
					is.Equal(status, http.StatusRequestEntityTooLarge)
				case tc.want.none:
					is.Equal(status, http.StatusNoContent)
					is.Equal(len(body), 0)
				default:
					is.Equal(status, http.StatusOK)
					checkReply(t, body, tc.want)
				}
			})
		}
	})
}

func dialRaw(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.Dial(url, nil)
	is.New(t).NoErr(err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	return ws
}

func sendFrame(t *testing.T, ws *websocket.Conn, frame string) {
	t.Helper()
	is := is.New(t)
	is.NoErr(ws.SetWriteDeadline(time.Now().Add(10 * time.Second)))
	is.NoErr(ws.WriteMessage(websocket.TextMessage, []byte(frame)))
}

func readFrame(t *testing.T, ws *websocket.Conn) []byte {
	t.Helper()
	is := is.New(t)
	is.NoErr(ws.SetReadDeadline(time.Now().Add(10 * time.Second)))
	_, data, err := ws.ReadMessage()
	is.NoErr(err)
	return data
}

func postFrame(t *testing.T, url, frame string) (int, []byte) {
	t.Helper()
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(frame))
	is.NoErr(err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	is.NoErr(err)
	return resp.StatusCode, body
}

// checkReply checks a reply against what the frame must get.
func checkReply(t *testing.T, data []byte, want expect) {
	t.Helper()
	is := is.New(t)
	is.True(utf8.Valid(data)) // a reply is valid UTF-8
	is.True(json.Valid(data)) // and valid JSON
	if want.batch != nil {
		var entries []json.RawMessage
		if err := json.Unmarshal(data, &entries); err != nil {
			t.Logf("not an array: %.200s", data)
		}
		is.NoErr(json.Unmarshal(data, &entries)) // a batch is answered by an array
		is.Equal(len(entries), len(want.batch))
		for i, e := range entries {
			checkEntry(t, e, want.batch[i])
		}
		return
	}
	if len(data) == 0 || data[0] != '{' {
		t.Logf("not a single object: %.200s", data)
		is.Fail() // one object answers one request
	}
	checkEntry(t, data, *want.single)
}

// checkEntry checks one response object.
func checkEntry(t *testing.T, data []byte, want answer) {
	t.Helper()
	is := is.New(t)
	var members map[string]json.RawMessage
	is.NoErr(json.Unmarshal(data, &members))
	_, hasResult := members["result"]
	_, hasError := members["error"]
	is.Equal(string(members["jsonrpc"]), `"2.0"`)
	is.True(hasResult != hasError) // exactly one of result and error
	if string(members["id"]) != want.id {
		t.Logf("reply %.300s", data)
	}
	is.Equal(string(members["id"]), want.id) // the id
	code := 0
	if hasError {
		var e struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		is.NoErr(json.Unmarshal(members["error"], &e))
		code = e.Code
		if code == badParams { // every -32602 carries {path, reason, message}
			var d struct{ Path, Reason, Message string }
			is.NoErr(json.Unmarshal(e.Data, &d))
			is.True(strings.HasPrefix(d.Path, "params") && d.Reason != "" && d.Message == d.Path+": "+d.Reason)
		}
	}
	if code != want.code {
		t.Logf("reply %.300s", data)
	}
	is.Equal(code, want.code) // the code
}
