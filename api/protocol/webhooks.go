package protocol

// The workflow.webhooks methods (mcpflow extensions): signed webhooks
// that start a deployment's runs (docs/triggers.md, "Webhooks").
const (
	MethodWebhooksCreate       = "workflow.webhooks.create"
	MethodWebhooksInspect      = "workflow.webhooks.inspect"
	MethodWebhooksList         = "workflow.webhooks.list"
	MethodWebhooksRotateSecret = "workflow.webhooks.rotate_secret"
	MethodWebhooksDelete       = "workflow.webhooks.delete"
)

// WebhookSpec is what workflow.webhooks.create is given.
type WebhookSpec struct {
	ID           string            `json:"id"`
	DeploymentID string            `json:"deployment_id"`
	InputMap     map[string]string `json:"input_map,omitempty"`
}

// CreateWebhookParams are the params of workflow.webhooks.create.
type CreateWebhookParams struct {
	Webhook WebhookSpec `json:"webhook"`
}

// WebhookIDParams name a webhook.
type WebhookIDParams struct {
	WebhookID string `json:"webhook_id"`
}

// RotateWebhookSecretParams are the params of
// workflow.webhooks.rotate_secret; GraceSeconds nil is the default grace.
type RotateWebhookSecretParams struct {
	WebhookID    string `json:"webhook_id"`
	GraceSeconds *int   `json:"grace_seconds,omitempty"`
}

// Webhook is the manifest's WebhookPayload: a webhook without its
// secrets.
type Webhook struct {
	ID                        string            `json:"id"`
	DeploymentID              string            `json:"deployment_id"`
	InputMap                  map[string]string `json:"input_map"`
	Path                      string            `json:"path"`
	CreatedAtEpochMs          int64             `json:"created_at_epoch_ms"`
	RotatedAtEpochMs          *int64            `json:"rotated_at_epoch_ms,omitempty"`
	PreviousSecretExpiresAtMs *int64            `json:"previous_secret_expires_at_epoch_ms,omitempty"`
	// RecentDeliveries (inspect only) are the webhook's logged
	// deliveries, newest first.
	RecentDeliveries []WebhookDelivery `json:"recent_deliveries,omitempty"`
}

// WebhookDelivery is the manifest's WebhookDeliveryPayload: one delivery
// a webhook answered, as its log keeps it.
type WebhookDelivery struct {
	ReceivedAtEpochMs int64  `json:"received_at_epoch_ms"`
	DeliveryID        string `json:"delivery_id,omitempty"`
	Outcome           string `json:"outcome"`
	Reason            string `json:"reason,omitempty"`
	Status            int    `json:"status"`
	RunID             string `json:"run_id,omitempty"`
}

// WebhookWithSecret answers create and rotate_secret: the one time the
// secret is shown.
type WebhookWithSecret struct {
	Webhook Webhook `json:"webhook"`
	Secret  string  `json:"secret"`
}

// ListWebhooksResult answers workflow.webhooks.list.
type ListWebhooksResult struct {
	Webhooks []Webhook `json:"webhooks"`
	Total    int       `json:"total"`
}

// DeleteWebhookResult answers workflow.webhooks.delete.
type DeleteWebhookResult struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}
