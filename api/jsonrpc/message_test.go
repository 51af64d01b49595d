package jsonrpc_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

func TestResponsesEchoTheIDByteForByte(t *testing.T) {
	for _, id := range []string{`0`, `-0`, `1.50`, `1e3`, `12345678901234567890123`, `"abc"`, `"\u00e9"`, `"<&>"`, `""`, `null`} {
		t.Run(id, func(t *testing.T) {
			is := is.New(t)
			f := jsonrpc.DecodeFrame([]byte(`{"jsonrpc":"2.0","method":"m","id":`+id+`}`), 1)
			is.Equal(len(f.Requests()), 1)
			resp, err := jsonrpc.NewResult(f.Requests()[0].ID, true)
			is.NoErr(err)
			out, err := jsonrpc.EncodeReply(false, []jsonrpc.Response{resp})
			is.NoErr(err)
			is.Equal(string(out), `{"jsonrpc":"2.0","id":`+id+`,"result":true}`)
		})
	}
}

func TestIDDistinguishesAbsentFromNull(t *testing.T) {
	is := is.New(t)
	var absent jsonrpc.ID
	is.True(absent.IsZero())
	is.True(!absent.IsNull())
	is.True(jsonrpc.NullID.IsNull())
	is.True(!jsonrpc.NullID.IsZero())
	is.Equal(jsonrpc.StringID("a\"b").String(), `"a\"b"`)
	is.Equal(jsonrpc.IntID(0).String(), `0`)

	var id jsonrpc.ID
	is.NoErr(json.Unmarshal([]byte(`null`), &id))
	is.Equal(id, jsonrpc.NullID)
	is.True(json.Unmarshal([]byte(`true`), &id) != nil)
	is.True(json.Unmarshal([]byte(`[1]`), &id) != nil)
}

func TestRequestsOmitAnAbsentID(t *testing.T) {
	is := is.New(t)
	b, err := json.Marshal(jsonrpc.Request{JSONRPC: jsonrpc.Version, Method: "m"})
	is.NoErr(err)
	is.Equal(string(b), `{"jsonrpc":"2.0","method":"m"}`)
	b, err = json.Marshal(jsonrpc.Request{JSONRPC: jsonrpc.Version, ID: jsonrpc.IntID(0), Method: "m", Params: json.RawMessage(`{}`)})
	is.NoErr(err)
	is.Equal(string(b), `{"jsonrpc":"2.0","id":0,"method":"m","params":{}}`)
}

func TestAResponseCarriesExactlyOneOfResultAndError(t *testing.T) {
	tests := []struct {
		name string
		resp jsonrpc.Response
		want string
	}{
		{"a nil result is null", jsonrpc.Response{ID: jsonrpc.IntID(1)}, `{"jsonrpc":"2.0","id":1,"result":null}`},
		{"an error hides the result", jsonrpc.Response{ID: jsonrpc.IntID(1), Result: json.RawMessage(`{}`), Error: jsonrpc.Errorf(jsonrpc.InternalError, "")},
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`},
		{"an absent id is written as null", jsonrpc.NewError(jsonrpc.ID{}, jsonrpc.Errorf(jsonrpc.ParseError, "")),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{"a nil error is an internal error", jsonrpc.NewError(jsonrpc.IntID(2), nil),
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			out, err := jsonrpc.EncodeReply(false, []jsonrpc.Response{tt.resp})
			is.NoErr(err)
			is.Equal(string(out), tt.want)
		})
	}
}

func TestNewResultReportsUnencodableValues(t *testing.T) {
	is := is.New(t)
	_, err := jsonrpc.NewResult(jsonrpc.IntID(1), math.Inf(1))
	is.True(err != nil)
}

func TestResponsesDecode(t *testing.T) {
	is := is.New(t)
	var resp jsonrpc.Response
	is.NoErr(json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":"r1","error":{"code":5000,"message":"Workflow operation failed","data":{"code":"KeyError","message":"no such run"}}}`), &resp))
	is.Equal(resp.ID, jsonrpc.StringID("r1"))
	is.Equal(resp.Error.Error(), "jsonrpc 5000 Workflow operation failed: no such run")
}

func TestRawResultsAreKeptAndKeptValid(t *testing.T) {
	is := is.New(t)
	raw := json.RawMessage(`{"a": [1, 2], "b": "<&>"}`)
	resp, err := jsonrpc.NewResult(jsonrpc.IntID(1), raw)
	is.NoErr(err)
	is.Equal(string(resp.Result), string(raw)) // kept as it is
	out, err := jsonrpc.EncodeResponse(resp)
	is.NoErr(err)
	is.Equal(string(out), `{"jsonrpc":"2.0","id":1,"result":{"a": [1, 2], "b": "<&>"}}`)

	resp, err = jsonrpc.NewResult(jsonrpc.IntID(2), json.RawMessage("\"a\xffb\""))
	is.NoErr(err)
	is.Equal(string(resp.Result), "\"a\ufffdb\"") // invalid UTF-8 is replaced
	_, err = jsonrpc.NewResult(jsonrpc.IntID(3), json.RawMessage(`{"a":`))
	is.True(err != nil) // invalid JSON is an error
}
