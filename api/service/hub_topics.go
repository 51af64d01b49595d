package service

import (
	"context"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// liveEvent is one event of a topic, as its subscriptions deliver it.
type liveEvent struct {
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
	read func(ctx context.Context, after int64, limit int) ([]liveEvent, error)
	// event and lagged are the methods of its notifications; params
	// makes an event's.
	event, lagged string
	params        func(subscriptionID string, e liveEvent) any
}

// runTopic is the event log of run id.
func (h *Hub) runTopic(id string) topic {
	return topic{
		key: runTopicKey(id), runID: id, event: protocol.NotifyRunEvent, lagged: protocol.NotifyRunLagged,
		read: func(ctx context.Context, after int64, limit int) ([]liveEvent, error) {
			events, _, err := h.store.ReadRunEvents(ctx, id, after, limit)
			out := make([]liveEvent, len(events))
			for i, e := range events {
				out[i] = liveEvent{seq: e.Seq, terminal: e.Status != nil && e.Status.Terminal, data: e}
			}
			return out, err
		},
		params: func(sub string, e liveEvent) any {
			return protocol.RunEventNotification{SubscriptionID: sub, RunEvent: e.data.(store.RunEvent)}
		},
	}
}

// adminTopic is the admin event log.
func (h *Hub) adminTopic() topic {
	return topic{
		key: adminTopicKey, event: protocol.NotifyAdminEvent, lagged: protocol.NotifyAdminLagged,
		read: func(ctx context.Context, after int64, limit int) ([]liveEvent, error) {
			events, err := h.store.ListEvents(ctx, after, limit)
			out := make([]liveEvent, len(events))
			for i, e := range events {
				out[i] = liveEvent{seq: e.Seq, data: e}
			}
			return out, err
		},
		params: func(sub string, e liveEvent) any {
			ev := e.data.(store.Event)
			return protocol.AdminEventNotification{SubscriptionID: sub, Sequence: ev.Seq, AdminEvent: adminEvent(ev)}
		},
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

// Store returns the hub's store as writers must use it: every commit of a
// run's events (CreateRun, RecordProgress, RecoverRunning) and every
// admin event appended wakes the feed that follows it, after the commit.
// Everything else is the store's own.
func (h *Hub) Store() store.Store { return liveStore{Store: h.store, hub: h} }

// liveStore is a store that tells its hub about commits.
type liveStore struct {
	store.Store
	hub *Hub
}

func (l liveStore) CreateRun(ctx context.Context, r store.Run, entries []workflow.TraceEntry) error {
	defer l.hub.opts.Metrics.StoreCommit("create_run")()
	return l.runCommitted(r.ID, l.Store.CreateRun(ctx, r, entries))
}

func (l liveStore) RecordProgress(ctx context.Context, r store.Run, entries []workflow.TraceEntry) error {
	defer l.hub.opts.Metrics.StoreCommit("record_progress")()
	return l.runCommitted(r.ID, l.Store.RecordProgress(ctx, r, entries))
}

func (l liveStore) RecoverRunning(ctx context.Context, now time.Time) ([]store.Run, error) {
	runs, err := l.Store.RecoverRunning(ctx, now)
	for _, r := range runs {
		_ = l.runCommitted(r.ID, nil)
	}
	return runs, err
}

// runCommitted wakes the feeds of run id and of the admin events (a run's
// commit may append its admin events) unless the write failed, and
// returns the write's error.
func (l liveStore) runCommitted(id string, err error) error {
	if err == nil {
		l.hub.committed(runTopicKey(id))
		l.hub.committed(adminTopicKey)
	}
	return err
}

func (l liveStore) AppendEvent(ctx context.Context, e store.Event) (int64, error) {
	defer l.hub.opts.Metrics.StoreCommit("append_event")()
	seq, err := l.Store.AppendEvent(ctx, e)
	return seq, l.committed(adminTopicKey, err)
}

// committed wakes the feed of key unless the write failed, and returns
// the write's error.
func (l liveStore) committed(key string, err error) error {
	if err == nil {
		l.hub.committed(key)
	}
	return err
}
