package live

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// event is one event of a topic, as its subscriptions deliver it.
type event struct {
	seq int64
	// terminal marks a run's last event: nothing follows it.
	terminal bool
	data     any // a store.RunEvent or a store.Event
}

// topic is an event log that subscriptions follow: a run's event log, or
// the admin event log.
type topic struct {
	key   string // the feed's key
	runID string // "" for the admin event log
	// read returns up to limit events after sequence number after, in
	// order.
	read func(ctx context.Context, after int64, limit int) ([]event, error)
	// event and lagged are the methods of its notifications; params
	// makes an event's.
	event, lagged string
	params        func(subscriptionID string, e event) any
}

// runTopic is the event log of run id.
func (h *Hub) runTopic(id string) topic {
	return topic{
		key: runTopicKey(id), runID: id, event: protocol.NotifyRunEvent, lagged: protocol.NotifyRunLagged,
		read: func(ctx context.Context, after int64, limit int) ([]event, error) {
			events, _, err := h.logs.ReadRunEvents(ctx, id, after, limit)
			out := make([]event, len(events))
			for i, e := range events {
				out[i] = event{seq: e.Seq, terminal: e.Status != nil && e.Status.Terminal, data: e}
			}
			return out, err
		},
		params: func(sub string, e event) any {
			return protocol.RunEventNotification{SubscriptionID: sub, RunEvent: runEvent(e.data.(store.RunEvent))}
		},
	}
}

// adminTopic is the admin event log.
func (h *Hub) adminTopic() topic {
	return topic{
		key: adminTopicKey, event: protocol.NotifyAdminEvent, lagged: protocol.NotifyAdminLagged,
		read: func(ctx context.Context, after int64, limit int) ([]event, error) {
			events, err := h.logs.ListEvents(ctx, after, limit)
			out := make([]event, len(events))
			for i, e := range events {
				out[i] = event{seq: e.Seq, data: e}
			}
			return out, err
		},
		params: func(sub string, e event) any {
			ev := e.data.(store.Event)
			return protocol.AdminEventNotification{SubscriptionID: sub, Sequence: ev.Seq, AdminEvent: AdminEvent(ev)}
		},
	}
}

// AdminEvent is a stored admin event as the API shows it, in the list of
// workflow.admin.events.list as in the notifications of a subscription.
func AdminEvent(e store.Event) protocol.AdminEvent {
	payload := e.Payload
	if payload == nil {
		payload = protocol.Object{}
	}
	return protocol.AdminEvent{
		Kind: e.Kind, TimestampEpochMs: e.TimestampEpochMs,
		ConnectionID: e.ConnectionID, CapabilityID: e.CapabilityID, WorkflowName: e.WorkflowName,
		Payload: payload,
	}
}

// Feed keys of the topics.
const adminTopicKey = "admin"

// kind is "run" or "admin": the topic label of the lag metric, which
// never names a run.
func (t topic) kind() string {
	if t.runID != "" {
		return "run"
	}
	return adminTopicKey
}

func runTopicKey(id string) string { return "run/" + id }
