package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// summary describes a decoded frame compactly: each request as "id method" ("-" for a
// notification) and each rejection as "id code".
type summary struct {
	Batch    bool
	Requests []string
	Rejected []string
}

func summarize(f jsonrpc.Frame) summary {
	s := summary{Batch: f.Batch}
	for _, r := range f.Requests() {
		id := r.ID.String()
		if r.IsNotification() {
			id = "-"
		}
		s.Requests = append(s.Requests, id+" "+r.Method)
	}
	for _, r := range f.Rejected() {
		s.Rejected = append(s.Rejected, fmt.Sprintf("%s %d", r.ID, r.Error.Code))
	}
	return s
}

// order describes a decoded frame's entries in frame order: "id method" for a request,
// "id code" for a rejected entry.
func order(f jsonrpc.Frame) []string {
	var out []string
	for _, e := range f.Entries {
		if e.Rejected != nil {
			out = append(out, fmt.Sprintf("%s %d", e.Rejected.ID, e.Rejected.Error.Code))
			continue
		}
		out = append(out, e.Request.ID.String()+" "+e.Request.Method)
	}
	return out
}

func TestDecodeFrameAppliesTheSpecRules(t *testing.T) {
	const h = `"jsonrpc":"2.0","method":"workflow.health"`
	tests := []struct {
		name  string
		frame string
		max   int // 0 means DefaultMaxBatch
		want  summary
	}{
		{"a single call", `{` + h + `,"id":1}`, 0, summary{Requests: []string{"1 workflow.health"}}},
		{"a notification has no id", `{` + h + `}`, 0, summary{Requests: []string{"- workflow.health"}}},
		{"id 0 is an id", `{` + h + `,"id":0}`, 0, summary{Requests: []string{"0 workflow.health"}}},
		{"a null id is an id", `{` + h + `,"id":null}`, 0, summary{Requests: []string{"null workflow.health"}}},
		{"a string id", `{` + h + `,"id":"a-1"}`, 0, summary{Requests: []string{`"a-1" workflow.health`}}},
		{"whitespace around the frame", " \n\t{" + h + `,"id":1}` + "\r\n", 0, summary{Requests: []string{"1 workflow.health"}}},

		{"invalid JSON", `{"jsonrpc":"2.0","method"`, 0, summary{Rejected: []string{"null -32700"}}},
		{"an empty frame", ``, 0, summary{Rejected: []string{"null -32700"}}},
		{"invalid JSON inside a batch", `[{` + h + `,"id":1},`, 0, summary{Rejected: []string{"null -32700"}}},

		{"a scalar frame", `42`, 0, summary{Rejected: []string{"null -32600"}}},
		{"a null frame", `null`, 0, summary{Rejected: []string{"null -32600"}}},
		{"an empty object", `{}`, 0, summary{Rejected: []string{"null -32600"}}},
		{"jsonrpc missing", `{"method":"m","id":7}`, 0, summary{Rejected: []string{"7 -32600"}}},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","method":"m","id":7}`, 0, summary{Rejected: []string{"7 -32600"}}},
		{"jsonrpc as a number", `{"jsonrpc":2.0,"method":"m","id":7}`, 0, summary{Rejected: []string{"7 -32600"}}},
		{"member names are case-sensitive", `{"JSONRPC":"2.0","Method":"m","id":7}`, 0, summary{Rejected: []string{"7 -32600"}}},
		{"method missing", `{"jsonrpc":"2.0","id":7}`, 0, summary{Rejected: []string{"7 -32600"}}},
		{"method empty", `{"jsonrpc":"2.0","method":"","id":7}`, 0, summary{Rejected: []string{"7 -32600"}}},
		{"method not a string", `{"jsonrpc":"2.0","method":1,"id":7}`, 0, summary{Rejected: []string{"7 -32600"}}},
		{"an invalid request without id is still answered", `{"jsonrpc":"2.0","method":1,"params":"bar"}`, 0, summary{Rejected: []string{"null -32600"}}},
		{"an id that is an object", `{` + h + `,"id":{"a":1}}`, 0, summary{Rejected: []string{"null -32600"}}},
		{"an id that is a boolean", `{` + h + `,"id":true}`, 0, summary{Rejected: []string{"null -32600"}}},
		{"scalar params", `{` + h + `,"id":1,"params":"bar"}`, 0, summary{Rejected: []string{"1 -32600"}}},
		{"numeric params", `{` + h + `,"id":1,"params":3}`, 0, summary{Rejected: []string{"1 -32600"}}},
		{"null params are absent", `{` + h + `,"id":1,"params":null}`, 0, summary{Requests: []string{"1 workflow.health"}}},
		{"array params", `{` + h + `,"id":1,"params":[1]}`, 0, summary{Requests: []string{"1 workflow.health"}}},

		{"a reserved rpc. call", `{"jsonrpc":"2.0","method":"rpc.other","id":1}`, 0, summary{Rejected: []string{"1 -32601"}}},
		{"a reserved rpc. notification is dropped", `{"jsonrpc":"2.0","method":"rpc.other"}`, 0, summary{}},

		{"an empty batch", `[]`, 0, summary{Rejected: []string{"null -32600"}}},
		{"a batch of scalars", `[1,2,3]`, 0, summary{Batch: true, Rejected: []string{"null -32600", "null -32600", "null -32600"}}},
		{"a mixed batch keeps valid entries", `[{` + h + `,"id":1},{"foo":"boo"},{` + h + `},"x"]`, 0,
			summary{Batch: true, Requests: []string{"1 workflow.health", "- workflow.health"}, Rejected: []string{"null -32600", "null -32600"}}},
		{"a batch of one", `[{` + h + `,"id":1}]`, 0, summary{Batch: true, Requests: []string{"1 workflow.health"}}},
		{"duplicate ids in a batch are all kept", `[{` + h + `,"id":1},{` + h + `,"id":2},{` + h + `,"id":1}]`, 0,
			summary{Batch: true, Requests: []string{"1 workflow.health", "2 workflow.health", "1 workflow.health"}}},
		{"a string id and a number id differ", `[{` + h + `,"id":1},{` + h + `,"id":"1"}]`, 0,
			summary{Batch: true, Requests: []string{"1 workflow.health", `"1" workflow.health`}}},
		{"notifications have no id to duplicate", `[{` + h + `},{` + h + `}]`, 0,
			summary{Batch: true, Requests: []string{"- workflow.health", "- workflow.health"}}},
		{"invalid UTF-8 in an id", "{" + h + ",\"id\":\"a\xff\"}", 0, summary{Rejected: []string{"null -32700"}}},
		{"invalid UTF-8 in a method", "{\"jsonrpc\":\"2.0\",\"method\":\"m\xc3\",\"id\":1}", 0, summary{Rejected: []string{"null -32700"}}},
		{"invalid UTF-8 in params", "{" + h + ",\"id\":1,\"params\":{\"k\":\"\xed\xa0\x80\"}}", 0, summary{Rejected: []string{"null -32700"}}},
		{"invalid UTF-8 in a member name", "{" + h + ",\"id\":1,\"\xfe\":1}", 0, summary{Rejected: []string{"null -32700"}}},
		{"invalid UTF-8 in one batch entry spoils the frame", "[{" + h + ",\"id\":1},{" + h + ",\"id\":\"\x80\"}]", 0, summary{Rejected: []string{"null -32700"}}},
		{"an escaped lone surrogate is valid JSON text", `{` + h + `,"id":"\udc00"}`, 0, summary{Requests: []string{`"\udc00" workflow.health`}}},
		{"an id at the length limit", `{` + h + `,"id":"` + strings.Repeat("x", jsonrpc.MaxIDBytes-2) + `"}`, 0,
			summary{Requests: []string{`"` + strings.Repeat("x", jsonrpc.MaxIDBytes-2) + `" workflow.health`}}},
		{"an id over the length limit", `{` + h + `,"id":"` + strings.Repeat("x", jsonrpc.MaxIDBytes-1) + `"}`, 0, summary{Rejected: []string{"null -32600"}}},
		{"a huge number id", `{` + h + `,"id":` + strings.Repeat("9", 400) + `}`, 0, summary{Requests: []string{strings.Repeat("9", 400) + " workflow.health"}}},
		{"a fractional id", `{` + h + `,"id":1.5}`, 0, summary{Requests: []string{"1.5 workflow.health"}}},
		{"an exponent id", `{` + h + `,"id":1e400}`, 0, summary{Requests: []string{"1e400 workflow.health"}}},
		{"a batch at the limit", `[{` + h + `,"id":1},{` + h + `,"id":2}]`, 2,
			summary{Batch: true, Requests: []string{"1 workflow.health", "2 workflow.health"}}},
		{"a batch over the limit", `[{` + h + `,"id":1},{` + h + `,"id":2},{` + h + `,"id":3}]`, 2, summary{Rejected: []string{"null -32600"}}},
		{"batching disabled", `[{` + h + `,"id":1}]`, -1, summary{Rejected: []string{"null -32600"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			limit := tt.max
			if limit == 0 {
				limit = jsonrpc.DefaultMaxBatch
			}
			is.Equal(summarize(jsonrpc.DecodeFrame([]byte(tt.frame), limit)), tt.want)
		})
	}
}

func TestDecodeFrameKeepsTheFrameOrder(t *testing.T) {
	is := is.New(t)
	f := jsonrpc.DecodeFrame([]byte(`[{"jsonrpc":"2.0","method":"a","id":1},2,{"jsonrpc":"2.0","method":"b","id":1},{"jsonrpc":"1.0","method":"c","id":3},{"jsonrpc":"2.0","method":"rpc.x"},{"jsonrpc":"2.0","method":"d"}]`), 10)
	is.True(f.Batch)
	is.Equal(order(f), []string{"1 a", "null -32600", "1 b", "3 -32600", " d"}) // the rpc. notification is dropped
}

func TestDecodeFrameKeepsTheRequestMembers(t *testing.T) {
	is := is.New(t)
	f := jsonrpc.DecodeFrame([]byte(`{"jsonrpc":"2.0","id":"x","method":"workflow.runs.start","params":{"deployment_id":"d1"},"extra":1}`), jsonrpc.DefaultMaxBatch)
	is.Equal(len(f.Requests()), 1)
	r := f.Requests()[0]
	is.Equal(r.JSONRPC, "2.0")
	is.Equal(r.ID, jsonrpc.StringID("x"))
	is.Equal(r.Method, "workflow.runs.start")
	is.Equal(string(r.Params), `{"deployment_id":"d1"}`)
}

func TestDecodeFrameExplainsRejections(t *testing.T) {
	is := is.New(t)
	f := jsonrpc.DecodeFrame([]byte(`[{"jsonrpc":"2.0","method":"a","id":1},{"jsonrpc":"2.0","method":"b","id":2},{"jsonrpc":"2.0","method":"c","id":3}]`), 2)
	is.Equal(len(f.Rejected()), 1)
	is.Equal(f.Rejected()[0].Error.Error(), "jsonrpc -32600 Invalid Request: batch too large: 3 entries, limit 2")

	f = jsonrpc.DecodeFrame([]byte(`{"jsonrpc":"2.0","method":"rpc.x","id":1}`), 1)
	is.Equal(f.Rejected()[0].Error.Error(), `jsonrpc -32601 Method not found: method "rpc.x" is reserved`)

	f = jsonrpc.DecodeFrame([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":\"\xff\"}"), 1)
	is.Equal(f.Rejected()[0].Error.Error(), "jsonrpc -32700 Parse error: frame is not valid UTF-8")
}

func TestEncodeReplyFollowsTheFrameShape(t *testing.T) {
	is := is.New(t)
	ok, err := jsonrpc.NewResult(jsonrpc.IntID(1), map[string]string{"status": "ok"})
	is.NoErr(err)
	bad := jsonrpc.NewError(jsonrpc.NullID, jsonrpc.Errorf(jsonrpc.InvalidRequest, ""))

	out, err := jsonrpc.EncodeReply(false, []jsonrpc.Response{ok})
	is.NoErr(err)
	is.Equal(string(out), `{"jsonrpc":"2.0","id":1,"result":{"status":"ok"}}`)

	out, err = jsonrpc.EncodeReply(true, []jsonrpc.Response{ok, bad})
	is.NoErr(err)
	is.Equal(string(out), `[{"jsonrpc":"2.0","id":1,"result":{"status":"ok"}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}]`)

	out, err = jsonrpc.EncodeReply(true, nil) // a batch of notifications only
	is.NoErr(err)
	is.Equal(out, nil)

	// Entries encoded one by one and joined give the same bytes.
	a, err := jsonrpc.EncodeResponse(ok)
	is.NoErr(err)
	b, err := jsonrpc.EncodeResponse(bad)
	is.NoErr(err)
	is.Equal(string(jsonrpc.JoinReply(true, [][]byte{a, b})), `[{"jsonrpc":"2.0","id":1,"result":{"status":"ok"}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}]`)
	is.Equal(string(jsonrpc.JoinReply(false, [][]byte{a})), string(a))
	is.Equal(jsonrpc.JoinReply(true, nil), nil)
}

// specExamples are the request frames of the JSON-RPC 2.0 specification's examples
// (section 7), plus mcpflow's own edge cases: the fuzz seeds.
var specExamples = []string{
	`{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}`,
	`{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}`,
	`{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}`,
	`{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}`,
	`{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}`,
	`{"jsonrpc": "2.0", "method": "foobar"}`,
	`{"jsonrpc": "2.0", "method": "foobar", "id": "1"}`,
	`{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]`,
	`{"jsonrpc": "2.0", "method": 1, "params": "bar"}`,
	`[
  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
  {"jsonrpc": "2.0", "method"
]`,
	`[]`,
	`[1]`,
	`[1,2,3]`,
	`[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ]`,
	`[
        {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}
    ]`,
	``, `{}`, `null`, `"x"`, `{"jsonrpc":"2.0","method":"m","id":1}`,
	`[{"jsonrpc":"2.0","method":"m","id":1},{"jsonrpc":"2.0","method":"m","id":1}]`,
	`{"jsonrpc":"2.0","method":"rpc.x"}`, `{"jsonrpc":"2.0","method":"m","params":"s","id":{}}`,
	`[{"jsonrpc":"2.0","method":"m","id":1.5e3,"params":[null]}]`, `{"jsonrpc":"2\u002e0","method":"m","id":"\u00e9"}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":\"\xff\"}",
	`{"jsonrpc":"2.0","method":"m","id":"\udc00<&>"}`,
}

func FuzzDecodeFrame(f *testing.F) {
	for _, seed := range specExamples {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		is := is.New(t)
		frame := jsonrpc.DecodeFrame(data, 4)
		if !json.Valid(data) || !utf8.Valid(data) {
			is.Equal(summarize(frame), summary{Rejected: []string{"null -32700"}})
		}
		is.True(frame.Batch || len(frame.Entries) <= 1) // a single request gets at most one answer
		is.True(len(frame.Entries) <= 4)                // the batch limit holds
		for _, r := range frame.Requests() {
			is.Equal(r.JSONRPC, jsonrpc.Version)
			is.True(r.Method != "")
			is.True(r.Params == nil || r.Params[0] == '{' || r.Params[0] == '[')
			is.True(len(r.ID.String()) <= jsonrpc.MaxIDBytes)
			// a request re-encodes and decodes to itself
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			is.NoErr(enc.Encode(r))
			is.Equal(summarize(jsonrpc.DecodeFrame(b.Bytes(), 1)).Requests, summarize(jsonrpc.Frame{Entries: []jsonrpc.Entry{{Request: r}}}).Requests)
		}
		var encoded [][]byte
		for _, r := range frame.Rejected() {
			is.True(r.Error != nil)
			e, err := jsonrpc.EncodeResponse(r)
			is.NoErr(err)
			encoded = append(encoded, e)
		}
		out, err := jsonrpc.EncodeReply(frame.Batch, frame.Rejected())
		is.NoErr(err)
		is.True(out == nil || json.Valid(out))
		is.True(utf8.Valid(out))                                               // a reply is always valid UTF-8
		is.Equal(string(jsonrpc.JoinReply(frame.Batch, encoded)), string(out)) // joining gives the same bytes
	})
}

func BenchmarkDecodeFrame(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":17,"method":"workflow.runs.start","params":{"deployment_id":"d1","workflow_input":{"text":"hello"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if f := jsonrpc.DecodeFrame(frame, jsonrpc.DefaultMaxBatch); len(f.Entries) != 1 || f.Entries[0].Rejected != nil {
			b.Fatal("request rejected")
		}
	}
}
