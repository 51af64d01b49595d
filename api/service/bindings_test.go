package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// Binding params decoded in the handler are refused with the message the
// strict params decode gave while the params held the language's types.
func TestBindingParamsAreRefusedWithTheLanguagesMessage(t *testing.T) {
	is := is.New(t)
	strict := func(raw string, v any) string {
		dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
		dec.DisallowUnknownFields()
		err := dec.Decode(v)
		is.True(err != nil) // the old params refused it
		return "invalid params: " + err.Error()
	}
	refused := func(err error) string {
		var e *jsonrpc.Error
		is.True(errors.As(err, &e)) // a JSON-RPC error
		is.Equal(e.Code, jsonrpc.InvalidParams)
		return e.Message
	}
	for _, raw := range []string{`[{"target":"x","bogus":1}]`, `[{"target":"x","path":"input.a"},5]`, `[{"target":"x","expression":{"kind":"literal","nope":1}}]`} {
		var old struct {
			Bindings []workflow.InputBinding `json:"bindings"`
		}
		var params struct {
			Bindings []protocol.InputBinding `json:"bindings"`
		}
		is.NoErr(json.Unmarshal([]byte(`{"bindings":`+raw+`}`), &params)) // the API's params take it as given
		_, err := languageInput(params.Bindings)
		is.Equal(refused(err), strict(`{"bindings":`+raw+`}`, &old)) // the same message as before
	}
	var old struct {
		Bindings []workflow.OutputBinding `json:"bindings"`
	}
	_, err := languageOutput([]protocol.OutputBinding{json.RawMessage(`{"source":"a","target":"b","x":1}`)})
	is.Equal(refused(err), strict(`{"bindings":[{"source":"a","target":"b","x":1}]}`, &old)) // output bindings too
}

func TestBindingParamsKeepNilAndEmptyApart(t *testing.T) {
	is := is.New(t)
	none, err := languageInput(nil)
	is.NoErr(err)
	is.True(none == nil) // absent stays absent
	empty, err := languageInput([]protocol.InputBinding{})
	is.NoErr(err)
	is.True(empty != nil && len(empty) == 0) // an empty list stays a list
}
