package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/live"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// pushing marks m as a method that pushes to its caller's connection:
// the edge gives it the connection's notifier (rpc.Method.Pushes), which
// subscriber finds.
func pushing(m rpc.Method) rpc.Method {
	m.Pushes = true
	return m
}

// subscriber returns the hub and the request's notifier, or why the
// request cannot subscribe.
func (s *Service) subscriber(ctx context.Context) (*live.Hub, *rpc.Request, error) {
	rn, ok := rpc.NotifierFrom(ctx)
	if !ok {
		return nil, nil, invalid("subscriptions need a WebSocket connection: their events are pushed as notifications, which a POST to /rpc cannot carry")
	}
	if s.Hub == nil {
		return nil, nil, invalid("live events are not enabled on this server")
	}
	return s.Hub, rn, nil
}

// subscribeRun answers workflow.runs.subscribe: the run's events after
// after_sequence (from its first without it), replayed from the store,
// then live until the event that ends the run.
func (s *Service) subscribeRun(ctx context.Context, p protocol.SubscribeRunParams) (protocol.SubscribeRunResult, error) {
	h, rn, err := s.subscriber(ctx)
	if err != nil {
		return protocol.SubscribeRunResult{}, err
	}
	what := fmt.Sprintf("workflow run %q", p.RunID)
	r, err := s.Store.GetRun(ctx, p.RunID)
	if err != nil {
		return protocol.SubscribeRunResult{}, storeErr(err, what)
	}
	after := deref(p.AfterSequence)
	// The event the client has last, if any, and the run's last one.
	seen, head, err := s.Store.ReadRunEvents(ctx, p.RunID, max(after-1, 0), 1)
	if err != nil {
		return protocol.SubscribeRunResult{}, storeErr(err, "events of "+what)
	}
	if after > head {
		return protocol.SubscribeRunResult{}, invalid("after_sequence %d is past the last event of %s, %d", after, what, head)
	}
	res := protocol.SubscribeRunResult{RunID: r.ID, Status: r.Status, LastSequence: head}
	// A client that has the event ending the run (or a run that ended
	// before runs had events) gets nothing more: nothing to subscribe.
	over := head == 0 && store.Terminal(r.Status) ||
		after > 0 && len(seen) == 1 && seen[0].Seq == after && seen[0].Status != nil && seen[0].Status.Terminal
	if over {
		res.SubscriptionID, err = live.NewSubscriptionID()
		return res, err
	}
	res.SubscriptionID, err = h.SubscribeRun(rn, r.ID, after, head)
	res.Active = err == nil
	return res, hubErr(err)
}

// subscribeAdminEvents answers workflow.admin.events.subscribe: the kept
// admin events after after_sequence (none without it), then live ones.
func (s *Service) subscribeAdminEvents(ctx context.Context, p protocol.SubscribeAdminEventsParams) (protocol.SubscribeAdminEventsResult, error) {
	h, rn, err := s.subscriber(ctx)
	if err != nil {
		return protocol.SubscribeAdminEventsResult{}, err
	}
	head, err := s.Store.LastEventSeq(ctx)
	if err != nil {
		return protocol.SubscribeAdminEventsResult{}, storeErr(err, "admin events")
	}
	after := head
	if p.AfterSequence != nil {
		if after = *p.AfterSequence; after > head {
			return protocol.SubscribeAdminEventsResult{}, invalid("after_sequence %d is past the last admin event, %d", after, head)
		}
	}
	id, err := h.SubscribeAdmin(rn, after, head)
	return protocol.SubscribeAdminEventsResult{SubscriptionID: id, LastSequence: head}, hubErr(err)
}

// unsubscriber answers workflow.runs.unsubscribe (admin false) or
// workflow.admin.events.unsubscribe (admin true): each ends only its own
// kind of subscription, of the same connection.
func (s *Service) unsubscriber(admin bool) func(context.Context, protocol.UnsubscribeParams) (protocol.UnsubscribeResult, error) {
	return func(ctx context.Context, p protocol.UnsubscribeParams) (protocol.UnsubscribeResult, error) {
		h, rn, err := s.subscriber(ctx)
		if err != nil {
			return protocol.UnsubscribeResult{}, err
		}
		end := h.UnsubscribeRun
		if admin {
			end = h.UnsubscribeAdmin
		}
		return protocol.UnsubscribeResult{SubscriptionID: p.SubscriptionID, Unsubscribed: end(rn, p.SubscriptionID)}, nil
	}
}

// hubErr is the error of a subscription the hub did not open: a closing
// hub is the service shutting down.
func hubErr(err error) error {
	if errors.Is(err, live.ErrClosed) {
		return errShuttingDown()
	}
	return err
}
