package store

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// Webhook is a signed webhook's definition: POST /hooks/<ID> starts a run
// of DeploymentID with its body mapped by InputMap (the whole body when it
// is empty). Secrets are the HMAC keys a delivery may be signed with, the
// current one first; a store opened WithSealer keeps them sealed in Sealed
// and returns them opened. No formatting or logging method shows a secret.
type Webhook struct {
	ID           string            `json:"id"`
	DeploymentID string            `json:"deployment_id"`
	InputMap     map[string]string `json:"input_map,omitempty"`
	Secrets      []WebhookSecret   `json:"secrets,omitempty"`
	Sealed       string            `json:"sealed,omitempty"`
	CreatedAtMs  int64             `json:"created_at_epoch_ms"`
	RotatedAtMs  int64             `json:"rotated_at_epoch_ms,omitempty"`
}

// WebhookSecret is one HMAC key of a webhook: the current one
// (ExpiresAtMs 0), or one a rotation replaced, valid until ExpiresAtMs.
type WebhookSecret struct {
	Secret      string `json:"secret"`
	ExpiresAtMs int64  `json:"expires_at_epoch_ms,omitempty"`
}

// Valid reports whether the secret may still verify a delivery at now.
func (s WebhookSecret) Valid(now time.Time) bool {
	return s.ExpiresAtMs == 0 || now.UnixMilli() < s.ExpiresAtMs
}

// String shows s without its value.
func (s WebhookSecret) String() string {
	return fmt.Sprintf("WebhookSecret{ExpiresAtMs:%d}", s.ExpiresAtMs)
}

// Format prints s as String does, for every verb.
func (s WebhookSecret) Format(f fmt.State, _ rune) { fmt.Fprint(f, s.String()) }

// LogValue logs s without its value.
func (s WebhookSecret) LogValue() slog.Value {
	return slog.GroupValue(slog.Int64("expires_at_epoch_ms", s.ExpiresAtMs))
}

// Webhooks keeps webhook definitions, the delivery ids they have seen
// and the log of their recent deliveries.
type Webhooks interface {
	// CreateWebhook stores a new webhook; ErrExists if the id is taken,
	// ErrInvalid unless ValidAuthID(h.ID).
	CreateWebhook(ctx context.Context, h Webhook) error
	// SaveWebhook replaces a stored webhook; ErrNotFound if there is none.
	SaveWebhook(ctx context.Context, h Webhook) error
	// GetWebhook returns a webhook or ErrNotFound.
	GetWebhook(ctx context.Context, id string) (Webhook, error)
	// ListWebhooks returns every webhook sorted by id.
	ListWebhooks(ctx context.Context) ([]Webhook, error)
	// DeleteWebhook removes a webhook, the delivery ids it has seen and
	// its log of deliveries; false if it did not exist.
	DeleteWebhook(ctx context.Context, id string) (bool, error)
	// ClaimDelivery records that hook received delivery, kept until
	// expires: true if it is new, false if it was claimed already and has
	// not expired at now (a replay). Of several claims at once, on one
	// node or several, exactly one is true.
	ClaimDelivery(ctx context.Context, hook, delivery string, now, expires time.Time) (bool, error)
	// ReleaseDelivery forgets a claim, so that the sender's retry of a
	// delivery whose run did not start is taken.
	ReleaseDelivery(ctx context.Context, hook, delivery string) error
	// PruneDeliveries deletes up to limit claims that expired at or
	// before now, and returns how many it deleted.
	PruneDeliveries(ctx context.Context, now time.Time, limit int) (int, error)
	// RecordDelivery appends d to the log of hook's deliveries, which
	// keeps the newest RecentDeliveries; nothing when there is no such
	// webhook (it was deleted meanwhile).
	RecordDelivery(ctx context.Context, hook string, d WebhookDelivery) error
	// RecentDeliveries returns hook's logged deliveries, newest first.
	RecentDeliveries(ctx context.Context, hook string) ([]WebhookDelivery, error)
}

// webhookAAD is the additional data of a webhook's sealed secrets: its
// id, so that they open only in the webhook they were sealed for.
func webhookAAD(id string) []byte { return []byte("mcpflow webhook\x00" + id) }

// SealWebhook returns h as a store that seals keeps it: its secrets
// sealed under s's current key into Sealed, and Secrets nil. A nil s
// returns h.
func SealWebhook(s Sealer, h Webhook) (Webhook, error) {
	if s == nil {
		return h, nil
	}
	sealed, err := sealJSON(s, webhookAAD(h.ID), map[string]any{"secrets": h.Secrets})
	if err != nil {
		return Webhook{}, fmt.Errorf("webhook %q: secrets: %w", h.ID, err)
	}
	h.Secrets, h.Sealed = nil, sealed
	return h, nil
}

// OpenWebhook returns a kept webhook as its callers see it: its Sealed
// secrets opened into Secrets. One kept in clear is returned as it is, so
// is every one when s is nil.
func OpenWebhook(s Sealer, h Webhook) (Webhook, error) {
	if s == nil || h.Sealed == "" {
		return h, nil
	}
	plaintext, err := s.Open(webhookAAD(h.ID), h.Sealed)
	if err != nil {
		return Webhook{}, fmt.Errorf("webhook %q: %w", h.ID, err)
	}
	var secrets struct {
		Secrets []WebhookSecret `json:"secrets"`
	}
	if err := json.Unmarshal(plaintext, &secrets); err != nil {
		return Webhook{}, fmt.Errorf("webhook %q: what opened is not its secrets", h.ID)
	}
	h.Secrets, h.Sealed = secrets.Secrets, ""
	return h, nil
}

// OpenWebhooks is OpenWebhook of each webhook.
func OpenWebhooks(s Sealer, list []Webhook) ([]Webhook, error) {
	return openAll(s, list, OpenWebhook)
}

// ResealWebhook is what Reseal does to one kept webhook: see ResealOne.
func ResealWebhook(s Sealer, kept Webhook) (Webhook, bool, error) {
	return reseal(s, kept, func(h Webhook) string { return h.Sealed }, OpenWebhook, SealWebhook)
}
