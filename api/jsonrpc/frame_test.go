package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

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
	for _, r := range f.Requests {
		id := r.ID.String()
		if r.IsNotification() {
			id = "-"
		}
		s.Requests = append(s.Requests, id+" "+r.Method)
	}
	for _, r := range f.Rejected {
		s.Rejected = append(s.Rejected, fmt.Sprintf("%s %d", r.ID, r.Error.Code))
	}
	return s
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
		{"duplicate ids in a batch", `[{` + h + `,"id":1},{` + h + `,"id":2},{` + h + `,"id":1}]`, 0,
			summary{Batch: true, Requests: []string{"2 workflow.health"}, Rejected: []string{"1 -32600", "1 -32600"}}},
		{"a string id and a number id differ", `[{` + h + `,"id":1},{` + h + `,"id":"1"}]`, 0,
			summary{Batch: true, Requests: []string{"1 workflow.health", `"1" workflow.health`}}},
		{"notifications have no id to duplicate", `[{` + h + `},{` + h + `}]`, 0,
			summary{Batch: true, Requests: []string{"- workflow.health", "- workflow.health"}}},
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

func TestDecodeFrameKeepsTheRequestMembers(t *testing.T) {
	is := is.New(t)
	f := jsonrpc.DecodeFrame([]byte(`{"jsonrpc":"2.0","id":"x","method":"workflow.runs.start","params":{"deployment_id":"d1"},"extra":1}`), jsonrpc.DefaultMaxBatch)
	is.Equal(len(f.Requests), 1)
	r := f.Requests[0]
	is.Equal(r.JSONRPC, "2.0")
	is.Equal(r.ID, jsonrpc.StringID("x"))
	is.Equal(r.Method, "workflow.runs.start")
	is.Equal(string(r.Params), `{"deployment_id":"d1"}`)
}

func TestDecodeFrameExplainsRejections(t *testing.T) {
	is := is.New(t)
	f := jsonrpc.DecodeFrame([]byte(`[{"jsonrpc":"2.0","method":"a","id":1},{"jsonrpc":"2.0","method":"b","id":2},{"jsonrpc":"2.0","method":"c","id":3}]`), 2)
	is.Equal(len(f.Rejected), 1)
	is.Equal(f.Rejected[0].Error.Error(), "jsonrpc -32600 Invalid Request: batch too large: 3 entries, limit 2")

	f = jsonrpc.DecodeFrame([]byte(`{"jsonrpc":"2.0","method":"rpc.x","id":1}`), 1)
	is.Equal(f.Rejected[0].Error.Error(), `jsonrpc -32601 Method not found: method "rpc.x" is reserved`)
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
}

func FuzzDecodeFrame(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `[]`, `[1,2]`, `null`, `"x"`, `{"jsonrpc":"2.0","method":"m","id":1}`,
		`[{"jsonrpc":"2.0","method":"m","id":1},{"jsonrpc":"2.0","method":"m","id":1}]`,
		`{"jsonrpc":"2.0","method":"rpc.x"}`, `{"jsonrpc":"2.0","method":"m","params":"s","id":{}}`,
		`[{"jsonrpc":"2.0","method":"m","id":1.5e3,"params":[null]}]`, `{"jsonrpc":"2\u002e0","method":"m","id":"\u00e9"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		is := is.New(t)
		frame := jsonrpc.DecodeFrame(data, 4)
		if !json.Valid(data) {
			is.Equal(summarize(frame), summary{Rejected: []string{"null -32700"}})
		}
		is.True(frame.Batch || len(frame.Requests)+len(frame.Rejected) <= 1) // a single request gets at most one answer
		for _, r := range frame.Requests {
			is.Equal(r.JSONRPC, jsonrpc.Version)
			is.True(r.Method != "")
			is.True(r.Params == nil || r.Params[0] == '{' || r.Params[0] == '[')
			// a request re-encodes and decodes to itself
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			is.NoErr(enc.Encode(r))
			is.Equal(summarize(jsonrpc.DecodeFrame(b.Bytes(), 1)).Requests, summarize(jsonrpc.Frame{Requests: []jsonrpc.Request{r}}).Requests)
		}
		for _, r := range frame.Rejected {
			is.True(r.Error != nil)
		}
		out, err := jsonrpc.EncodeReply(frame.Batch, frame.Rejected)
		is.NoErr(err)
		is.True(out == nil || json.Valid(out))
	})
}

func BenchmarkDecodeFrame(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":17,"method":"workflow.runs.start","params":{"deployment_id":"d1","workflow_input":{"text":"hello"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if f := jsonrpc.DecodeFrame(frame, jsonrpc.DefaultMaxBatch); len(f.Requests) != 1 {
			b.Fatal("request rejected")
		}
	}
}
