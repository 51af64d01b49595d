package client

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// TestSubscriptionNotificationsReachTheHandler: a server answers a run
// subscription, then pushes an event; the client hands it to its
// notification handler and goes on answering calls.
func TestSubscriptionNotificationsReachTheHandler(t *testing.T) {
	is := is.New(t)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if err := ws.ReadJSON(&req); err != nil {
				return
			}
			reply := map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{
				"subscription_id": "sub_1", "run_id": "run_1", "status": "running", "last_sequence": 0, "active": true}}
			event := map[string]any{"jsonrpc": "2.0", "method": protocol.NotifyRunEvent, "params": map[string]any{
				"subscription_id": "sub_1", "run_id": "run_1", "sequence": 1, "kind": "status", "timestamp_epoch_ms": 1,
				"status": map[string]any{"status": "running", "terminal": false, "trace_count": 0}}}
			if ws.WriteJSON(reply) != nil || ws.WriteJSON(event) != nil {
				return
			}
		}
	}))
	t.Cleanup(hs.Close)
	c, err := Dial(bounded(t), "ws"+strings.TrimPrefix(hs.URL, "http"))
	is.NoErr(err)
	t.Cleanup(func() { _ = c.Close() })
	got := make(chan Notification, 4)
	c.OnNotification(func(n Notification) { got <- n })

	res, err := c.SubscribeRun(bounded(t), protocol.SubscribeRunParams{RunID: "run_1"})
	is.NoErr(err)
	is.Equal(res.SubscriptionID, "sub_1")
	select {
	case n := <-got:
		is.Equal(n.Method, protocol.NotifyRunEvent)
		var ev protocol.RunEventNotification
		is.NoErr(json.Unmarshal(n.Params, &ev))
		is.Equal(ev.Seq, int64(1))
		is.Equal(ev.Status.Status, "running")
	case <-time.After(wait):
		is.Fail() // the event reaches the handler
	}
	_, err = c.UnsubscribeRun(bounded(t), "sub_1") // the connection keeps answering
	is.NoErr(err)
}
