package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// adminEvent is the params of one workflow.admin.event.
func adminEvent(t *testing.T, seq int64, kind string) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(p.AdminEventNotification{SubscriptionID: "s", Sequence: seq, AdminEvent: p.AdminEvent{Kind: kind, TimestampEpochMs: 1}})
	is.New(t).NoErr(err)
	return data
}

// TestPrintEventsPrintsEachEventOnceUntilTheSubscriptionEnds checks one
// subscription's printing: events in order, those already printed (a
// subscription made again replays from the last one) skipped, and the
// end at a lag (nil params) or an overflow, with the last event printed.
func TestPrintEventsPrintsEachEventOnceUntilTheSubscriptionEnds(t *testing.T) {
	is := is.New(t)
	var out bytes.Buffer
	c := &conn{Client: &client.Client{}, r: &remote{output: outputJSON}, out: &out}
	queue := make(chan json.RawMessage, 8)
	for _, e := range []json.RawMessage{adminEvent(t, 3, "old"), adminEvent(t, 4, "a"), adminEvent(t, 5, "b"), adminEvent(t, 5, "b"), nil} {
		queue <- e
	}
	last, printed, err := printEvents(context.Background(), c, queue, make(chan struct{}), 3)
	is.NoErr(err)
	is.Equal(last, int64(5)) // the last printed, to subscribe again after
	is.True(printed)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	is.Equal(len(lines), 2) // 3 was printed before, and 5 comes once
	var first struct {
		Sequence int64  `json:"sequence"`
		Kind     string `json:"kind"`
	}
	is.NoErr(json.Unmarshal([]byte(lines[0]), &first))
	is.Equal(first.Sequence, int64(4))
	is.Equal(first.Kind, "a")

	lost := make(chan struct{}, 1)
	lost <- struct{}{}
	last, printed, err = printEvents(context.Background(), c, make(chan json.RawMessage), lost, 5)
	is.NoErr(err)
	is.Equal(last, int64(5)) // an overflow ends the subscription, nothing lost from what was printed
	is.True(!printed)

	queue = make(chan json.RawMessage, 1)
	queue <- json.RawMessage(`{"sequence":"x"}`)
	_, _, err = printEvents(context.Background(), c, queue, make(chan struct{}), 5)
	is.True(err != nil) // a notification that does not decode is an error

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = printEvents(ctx, c, make(chan json.RawMessage), make(chan struct{}), 5)
	is.NoErr(err) // following ends with its context
}
