package fakes

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Starter is a method table that starts nothing: it answers each
// workflow.runs.start with RunID, running, as the webhook face expects,
// and refuses every other method.
type Starter struct {
	RunID string
}

// Call answers workflow.runs.start into result.
func (s Starter) Call(_ context.Context, method string, _, result any) error {
	if method != "workflow.runs.start" {
		return fmt.Errorf("fakes.Starter serves workflow.runs.start only, not %s", method)
	}
	raw, err := json.Marshal(map[string]any{"run_id": s.RunID, "status": "running"})
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, result)
}

// DeliveryLogSpy is a memory store that notes the webhook of each
// RecordDelivery before it passes it on: a test sees each write the
// webhook face tried, not only what the store kept.
type DeliveryLogSpy struct {
	*store.Memory
	mu     sync.Mutex
	logged []string
}

// RecordDelivery notes hook, then records d in the memory store.
func (s *DeliveryLogSpy) RecordDelivery(ctx context.Context, hook string, d store.WebhookDelivery) error {
	s.mu.Lock()
	s.logged = append(s.logged, hook)
	s.mu.Unlock()
	return s.Memory.RecordDelivery(ctx, hook, d)
}

// Logged returns the webhook of each RecordDelivery so far, in order.
func (s *DeliveryLogSpy) Logged() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.logged)
}
