package session

import (
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestAMessageDecodesAsGoSDKDecodesIt(t *testing.T) {
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,{"b":null}]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		`{"jsonrpc":"2.0","id":"mcpflow-side-3","result":{"content":[{"type":"text","text":"\"id\":2 \\ \u00e9"}]}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no such method","data":{"x":1}}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"","params":{}}`, // an empty method is a method (go-sdk#976)
		`{"jsonrpc":"2.0","id":3.0,"result":{}}`,
		`{"jsonrpc":"2.0","id":4,"result":null}`,
		`{"jsonrpc":"2.0","id":4,"Result":{"a":1}}`,                         // fields match case sensitively
		`{"jsonrpc":"2.0","id":5,"method":"m","params":{"x":1},"extra":[]}`, // unknown fields are left out
		` {"jsonrpc":"2.0","id":6,"result":{}} `,
		`{"jsonrpc":"1.0","id":1,"result":{}}`, // the wrong version
		`{"jsonrpc":"2.0","result":{}}`,        // an answer without an id
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":true,"result":{}}`, // an id neither a number nor a string
		`{"jsonrpc":"2.0","id":1,"method":3}`,     // a method that is no string
		`{"jsonrpc":"2.0","id":1,"result":{}`,     // cut short
		`not json`,
		`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`, // too deep
		`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`,   // deep enough
	} {
		is := is.NewRelaxed(t)
		want, wantErr := jsonrpc.DecodeMessage([]byte(msg))
		got, err := decodeMessage([]byte(msg))
		is.Equal(err != nil, wantErr != nil) // fails where go-sdk's fails
		if err != nil {
			continue
		}
		is.Equal(got, want) // and decodes the same message
	}
}

func TestADecodedMessageKeepsNothingOfItsLine(t *testing.T) {
	is := is.New(t)
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":{"text":"kept"}}`)
	m, err := decodeMessage(line)
	is.NoErr(err)
	for i := range line {
		line[i] = 'x' // the reader's buffer, reused for the next line
	}
	is.Equal(string(m.(*jsonrpc.Response).Result), `{"text":"kept"}`)
}
