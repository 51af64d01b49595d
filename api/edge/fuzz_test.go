package edge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/edge"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// fuzzMethods is every method of the contract plus a few the contract does
// not list, each served by a handler that, by its params' hash, answers
// them back, fails as a domain error, fails as api/service reports invalid
// params, fails plainly, or panics.
func fuzzMethods() (map[string]rpc.Handler, []string) {
	handler := func(_ context.Context, params json.RawMessage) (any, error) {
		h := fnv.New32a()
		_, _ = h.Write(params)
		switch h.Sum32() % 5 {
		case 0:
			return params, nil
		case 1:
			return nil, jsonrpc.Failed("KeyError", "no such thing")
		case 2:
			return nil, &jsonrpc.Error{Code: jsonrpc.InvalidParams, Message: "invalid params: " + string(params)}
		case 3:
			return nil, fmt.Errorf("plain failure")
		default:
			panic("fuzzed handler panics")
		}
	}
	names := append(contract.Default().Methods(), "test.free", "rpc.discover", "no.such.method", "rpc.reserved")
	table := map[string]rpc.Handler{}
	for _, n := range names[:len(names)-2] {
		table[n] = handler
	}
	delete(table, "rpc.discover") // the edge serves it
	return table, names
}

// FuzzDispatch posts one request (or a batch of it twice) to /rpc, with a
// method of the table and fuzzed params, and checks that the reply is
// well-formed JSON-RPC: no panic escapes, the id is echoed, exactly one of
// result and error, a known code, and every -32602 in its one shape.
func FuzzDispatch(f *testing.F) {
	// The handlers panic and fail by the thousand: their logs go nowhere.
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler))
	f.Cleanup(func() { slog.SetDefault(prev) })
	methods, names := fuzzMethods()
	srv := edge.New(open(methods), contract.Default(), edge.Options{MaxMessageBytes: 1 << 20})
	defer srv.Close()
	h := srv.Handler()
	for i, params := range []string{
		`{}`, `[42, 23]`, `{"subtrahend": 23, "minuend": 42}`, `[1,2,3,4,5]`, `{"name": "myself"}`, `null`, `"bar"`,
		`{"deployment_id":"d1","workflow_input":{"text":"hi"},"trace_range":{"start":0,"limit":20}}`,
		`{"deployment_id":""}`, `{"trace_range":{"limit":500}}`, `{"workspace_id":"w","revision":-1}`,
		`{"bogus":1}`, `{"limit":0}`, `{"qualified_name":"a.b.c","payload":{}}`, `{"a":"\u00e9<&>"}`,
	} {
		f.Add(uint8(i*7), []byte(params), i%3 == 0, i%4 == 0)
	}
	known := map[int]bool{jsonrpc.ParseError: true, jsonrpc.InvalidRequest: true, jsonrpc.MethodNotFound: true, jsonrpc.InvalidParams: true,
		jsonrpc.InternalError: true, jsonrpc.Overloaded: true, jsonrpc.RequestTimeout: true, jsonrpc.OperationFailed: true}
	f.Fuzz(func(t *testing.T, method uint8, params []byte, batch, notify bool) {
		is := is.New(t)
		name := names[int(method)%len(names)]
		id := `,"id":7`
		if notify {
			id = ""
		}
		entry := fmt.Sprintf(`{"jsonrpc":"2.0"%s,"method":%q,"params":%s}`, id, name, params)
		frame := entry
		if batch {
			frame = "[" + entry + "," + entry + "]"
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/rpc", strings.NewReader(frame))
		req.Host = "127.0.0.1:8765" // a loopback name: NewRequest's example.com is refused
		h.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		if rec.Code == http.StatusNoContent {
			is.Equal(len(body), 0)
			is.True(notify || strings.HasPrefix(name, "rpc.")) // only notifications go unanswered
			return
		}
		is.Equal(rec.Code, http.StatusOK)
		is.True(utf8.Valid(body))
		is.True(json.Valid(body))
		var replies []json.RawMessage
		if body[0] == '[' {
			is.NoErr(json.Unmarshal(body, &replies))
		} else {
			replies = []json.RawMessage{body}
		}
		for _, raw := range replies {
			var members map[string]json.RawMessage
			is.NoErr(json.Unmarshal(raw, &members))
			_, hasID := members["id"]
			_, hasResult := members["result"]
			_, hasError := members["error"]
			is.True(hasID)                 // an id member, always
			is.True(hasResult != hasError) // exactly one of result and error
			var r struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code    int             `json:"code"`
					Message string          `json:"message"`
					Data    json.RawMessage `json:"data"`
				} `json:"error"`
			}
			is.NoErr(json.Unmarshal(raw, &r))
			is.Equal(r.JSONRPC, "2.0")
			if !hasError {
				is.Equal(string(r.ID), "7")
				continue
			}
			is.True(string(r.ID) == "7" || string(r.ID) == "null")
			is.True(known[r.Error.Code]) // a documented code
			is.Equal(r.Error.Message, jsonrpc.Message(r.Error.Code))
			if r.Error.Code == jsonrpc.InvalidParams {
				var d jsonrpc.ParamsDetail
				is.NoErr(json.Unmarshal(r.Error.Data, &d))
				is.True(strings.HasPrefix(d.Path, "params"))
				is.Equal(d.Message, d.Path+": "+d.Reason)
			}
		}
	})
}
