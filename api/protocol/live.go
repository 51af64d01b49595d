package protocol

// Live events: subscriptions that push a run's events, or the admin event
// log, as JSON-RPC notifications. All are extensions to the reference
// contract.
const (
	MethodRunsSubscribe          = "workflow.runs.subscribe"
	MethodRunsUnsubscribe        = "workflow.runs.unsubscribe"
	MethodAdminEventsSubscribe   = "workflow.admin.events.subscribe"
	MethodAdminEventsUnsubscribe = "workflow.admin.events.unsubscribe"
)

// Notifications a subscription pushes (JSON-RPC requests without an id).
const (
	// NotifyRunEvent carries one run event (RunEventNotification).
	NotifyRunEvent = "workflow.runs.event"
	// NotifyRunLagged ends a run subscription that could not keep up
	// (LaggedNotification).
	NotifyRunLagged = "workflow.runs.lagged"
	// NotifyAdminEvent carries one admin event (AdminEventNotification).
	NotifyAdminEvent = "workflow.admin.event"
	// NotifyAdminLagged ends an admin event subscription that could not
	// keep up (LaggedNotification).
	NotifyAdminLagged = "workflow.admin.lagged"
)

// Why a subscription lagged.
const (
	// LagBufferFull: the subscriber read slower than events came and its
	// bounded buffer filled.
	LagBufferFull = "buffer_full"
	// LagUnavailable: events could not be read or delivered in order.
	LagUnavailable = "unavailable"
)

// SubscribeRunParams are the params of workflow.runs.subscribe.
// AfterSequence is the last sequence number the client has (0, the
// default, replays the run from its first event).
type SubscribeRunParams struct {
	RunID         string `json:"run_id"`
	AfterSequence *int64 `json:"after_sequence,omitempty"`
}

// SubscribeRunResult answers workflow.runs.subscribe, before any event of
// the subscription is sent. Status and LastSequence are the run's when it
// subscribed; Active is false when no event will follow (the run had
// ended and the client has all its events), and the subscription is then
// already over.
type SubscribeRunResult struct {
	SubscriptionID string `json:"subscription_id"`
	RunID          string `json:"run_id"`
	Status         string `json:"status"`
	LastSequence   int64  `json:"last_sequence"`
	Active         bool   `json:"active"`
}

// SubscribeAdminEventsParams are the params of
// workflow.admin.events.subscribe. AfterSequence is the last sequence
// number the client has: the kept events after it are replayed first.
// Without it only events appended from now on are sent.
type SubscribeAdminEventsParams struct {
	AfterSequence *int64 `json:"after_sequence,omitempty"`
}

// SubscribeAdminEventsResult answers workflow.admin.events.subscribe.
// LastSequence is the admin event log's when it subscribed.
type SubscribeAdminEventsResult struct {
	SubscriptionID string `json:"subscription_id"`
	LastSequence   int64  `json:"last_sequence"`
}

// UnsubscribeParams are the params of both unsubscribe methods.
type UnsubscribeParams struct {
	SubscriptionID string `json:"subscription_id"`
}

// UnsubscribeResult answers both unsubscribe methods: Unsubscribed is
// false when the connection had no such subscription (never, or no more:
// one that delivered a run's end, or lagged, has ended by itself).
type UnsubscribeResult struct {
	SubscriptionID string `json:"subscription_id"`
	Unsubscribed   bool   `json:"unsubscribed"`
}

// RunEventNotification is the params of workflow.runs.event: one event of
// the run, numbered per run from 1 without gaps.
type RunEventNotification struct {
	SubscriptionID string `json:"subscription_id"`
	RunEvent
}

// AdminEventNotification is the params of workflow.admin.event: one admin
// event and its sequence number in the admin event log.
type AdminEventNotification struct {
	SubscriptionID string `json:"subscription_id"`
	Sequence       int64  `json:"sequence"`
	AdminEvent
}

// LaggedNotification is the params of workflow.runs.lagged and
// workflow.admin.lagged: the subscription has ended; Cursor is the last
// sequence number it delivered, to subscribe again after.
type LaggedNotification struct {
	SubscriptionID string  `json:"subscription_id"`
	RunID          *string `json:"run_id,omitempty"`
	Cursor         int64   `json:"cursor"`
	Reason         string  `json:"reason"`
}
