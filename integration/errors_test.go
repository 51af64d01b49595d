package integration

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// rawReply is a JSON-RPC response as a test reads it.
type rawReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// exchange sends one raw frame and reads one reply frame.
func exchange(t *testing.T, ws *websocket.Conn, frame string) rawReply {
	t.Helper()
	is := is.New(t)
	is.NoErr(ws.SetWriteDeadline(time.Now().Add(10 * time.Second)))
	is.NoErr(ws.WriteMessage(websocket.TextMessage, []byte(frame)))
	is.NoErr(ws.SetReadDeadline(time.Now().Add(10 * time.Second)))
	_, data, err := ws.ReadMessage()
	is.NoErr(err)
	var r rawReply
	is.NoErr(json.Unmarshal(data, &r))
	return r
}

func TestBadFramesGetTheirErrorsAndTheConnectionKeepsWorking(t *testing.T) {
	is := is.New(t)
	svc := startService(t, session.Factories{config.TransportStdio: fakes.NewInMemory(nil)}, stdioSource("fixture.default", "in-memory"))
	ws, _, err := websocket.DefaultDialer.Dial(svc.URL, nil)
	is.NoErr(err)
	defer ws.Close()

	r := exchange(t, ws, `{"jsonrpc":"2.0","id":1,"method":`)
	is.Equal(r.Error.Code, -32700) // malformed frame
	is.Equal(string(r.ID), "null")

	r = exchange(t, ws, `{"jsonrpc":"2.0","id":"a","method":"workflow.nope","params":{}}`)
	is.Equal(r.Error.Code, -32601) // unknown method
	is.Equal(string(r.ID), `"a"`)

	r = exchange(t, ws, `{"jsonrpc":"2.0","id":2,"method":"workflow.runs.start","params":{"deployment_id":"x","bogus":1}}`)
	is.Equal(r.Error.Code, -32602) // unknown key
	is.Equal(string(r.ID), "2")

	r = exchange(t, ws, `{"jsonrpc":"2.0","id":3,"method":"workflow.admin.connections.refresh_catalog","params":{"connection_id":"fixture.default","extra":true}}`)
	is.Equal(r.Error.Code, -32602) // unknown key on mcpflow's own method too

	r = exchange(t, ws, `{"jsonrpc":"2.0","id":4,"method":"workflow.runs.start","params":{"deployment_id":"missing"}}`)
	is.Equal(r.Error.Code, 5000) // domain error
	is.Equal(r.Error.Message, "Workflow operation failed")
	var data struct{ Code, Message string }
	is.NoErr(json.Unmarshal(r.Error.Data, &data))
	is.Equal(data.Code, "KeyError")
	is.True(data.Message != "")

	r = exchange(t, ws, `{"jsonrpc":"2.0","id":0,"method":"workflow.health"}`)
	is.True(r.Error == nil) // the connection still serves
	is.Equal(string(r.ID), "0")
	var health struct{ Status string }
	is.NoErr(json.Unmarshal(r.Result, &health))
	is.Equal(health.Status, "ok")
}
