package store

// RecentDeliveries bounds the deliveries a webhook's log keeps: each
// record of one drops the oldest past it (docs/decisions.md, "Issue 31:
// recent deliveries").
const RecentDeliveries = 50

// WebhookDelivery is one delivery a webhook answered, as its log keeps
// it for workflow.webhooks.inspect: when it came, what it was answered
// and the run it started. It never holds the body, a header's value or a
// secret; DeliveryID, which the sender chose, only once the signature
// verified.
type WebhookDelivery struct {
	ReceivedAtMs int64  `json:"received_at_epoch_ms"`
	DeliveryID   string `json:"delivery_id,omitempty"`
	// Outcome is the delivery's outcome as api/hooks counts it.
	Outcome string `json:"outcome"`
	// Reason is why it was refused, in the server's words.
	Reason string `json:"reason,omitempty"`
	Status int    `json:"status"`
	RunID  string `json:"run_id,omitempty"`
}
