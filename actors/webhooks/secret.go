package webhooks

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// DefaultGrace is how long a rotated-out secret keeps verifying
// deliveries, so that senders can be moved to the new one.
const DefaultGrace = 24 * time.Hour

// secretPrefix marks a webhook secret, so that a scanner can find one
// pasted where it should not be.
const secretPrefix = "whsec_"

// NewSecret returns a new random secret: 32 bytes, URL-safe base64.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a webhook secret: %w", err)
	}
	return secretPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// Rotate returns h's secrets with next as the current one, the current
// one valid until now+grace, and those already expired at now dropped.
// A secret already in its grace keeps its own expiry.
func Rotate(h store.Webhook, next string, now time.Time, grace time.Duration) []store.WebhookSecret {
	out := []store.WebhookSecret{{Secret: next}}
	for _, s := range h.Secrets {
		if !s.Valid(now) {
			continue
		}
		if s.ExpiresAtMs == 0 {
			s.ExpiresAtMs = now.Add(grace).UnixMilli()
		}
		out = append(out, s)
	}
	return out
}
