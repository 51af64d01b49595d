package store

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// deliveryKey names one delivery of one webhook.
type deliveryKey struct{ hook, delivery string }

// CreateWebhook implements Webhooks.
func (m *Memory) CreateWebhook(_ context.Context, h Webhook) error {
	if !ValidAuthID(h.ID) {
		return fmt.Errorf("create webhook %q: the id is not valid: %w", h.ID, ErrInvalid)
	}
	c, err := deepCopy(h)
	if err != nil {
		return fmt.Errorf("create webhook %q: %w", h.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.webhooks[h.ID]; ok {
		return fmt.Errorf("create webhook %q: %w", h.ID, ErrExists)
	}
	m.webhooks[h.ID] = c
	return nil
}

// SaveWebhook implements Webhooks.
func (m *Memory) SaveWebhook(_ context.Context, h Webhook) error {
	c, err := deepCopy(h)
	if err != nil {
		return fmt.Errorf("save webhook %q: %w", h.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.webhooks[h.ID]; !ok {
		return fmt.Errorf("save webhook %q: %w", h.ID, ErrNotFound)
	}
	m.webhooks[h.ID] = c
	return nil
}

// GetWebhook implements Webhooks.
func (m *Memory) GetWebhook(_ context.Context, id string) (Webhook, error) {
	h, err := getKeyed(m, m.webhooks, id)
	if err != nil {
		return Webhook{}, fmt.Errorf("get webhook %q: %w", id, err)
	}
	return h, nil
}

// ListWebhooks implements Webhooks.
func (m *Memory) ListWebhooks(context.Context) ([]Webhook, error) {
	return listKeyed(m, m.webhooks)
}

// DeleteWebhook implements Webhooks.
func (m *Memory) DeleteWebhook(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.webhooks[id]
	delete(m.webhooks, id)
	delete(m.hookLog, id)
	for k := range m.deliveries {
		if k.hook == id {
			delete(m.deliveries, k)
		}
	}
	return ok, nil
}

// ClaimDelivery implements Webhooks.
func (m *Memory) ClaimDelivery(_ context.Context, hook, delivery string, now, expires time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := deliveryKey{hook, delivery}
	if until, ok := m.deliveries[k]; ok && until.After(now) {
		return false, nil
	}
	m.deliveries[k] = expires
	return true, nil
}

// ReleaseDelivery implements Webhooks.
func (m *Memory) ReleaseDelivery(_ context.Context, hook, delivery string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.deliveries, deliveryKey{hook, delivery})
	return nil
}

// PruneDeliveries implements Webhooks.
func (m *Memory) PruneDeliveries(_ context.Context, now time.Time, limit int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for k, until := range m.deliveries {
		if n >= limit {
			break
		}
		if !until.After(now) {
			delete(m.deliveries, k)
			n++
		}
	}
	return n, nil
}

// RecordDelivery implements Webhooks.
func (m *Memory) RecordDelivery(_ context.Context, hook string, d WebhookDelivery) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.webhooks[hook]; !ok {
		return nil
	}
	log := append(m.hookLog[hook], d)
	m.hookLog[hook] = slices.Clone(log[max(0, len(log)-RecentDeliveries):])
	return nil
}

// RecentDeliveries implements Webhooks.
func (m *Memory) RecentDeliveries(_ context.Context, hook string) ([]WebhookDelivery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Clone(m.hookLog[hook])
	slices.Reverse(out)
	return out, nil
}
