package service

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/audit"
)

// record appends an event to the admin event log.
func (s *Service) record(ctx context.Context, e audit.Event) { audit.Record(ctx, s.Store, s.now(), e) }
