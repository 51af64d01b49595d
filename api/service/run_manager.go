package service

import (
	"errors"

	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// runsErr maps a run manager's failure to the API's error: ErrShuttingDown
// and ErrNotMember (retry later, or elsewhere) are -32000, a runs.Error its kind's code, a runs.StoreError what storeErr
// makes of its store error; anything else passes as it is.
func runsErr(err error) error {
	var failed *runs.Error
	var stored *runs.StoreError
	switch {
	case errors.Is(err, runs.ErrShuttingDown):
		return errShuttingDown()
	case errors.Is(err, runs.ErrNotMember):
		return jsonrpc.Errorf(jsonrpc.Overloaded, "%s", runs.ErrNotMember.Error())
	case errors.As(err, &failed):
		switch failed.Kind {
		case runs.InvalidParams:
			return invalidParams("%s", failed.Message)
		case runs.Upstream:
			return upstream("%s", failed.Message)
		default:
			return invalid("%s", failed.Message)
		}
	case errors.As(err, &stored):
		return storeErr(stored.Err, stored.What)
	default:
		return err
	}
}

// dependencyDiags are a run manager's diagnostics as the API answers them.
func dependencyDiags(diags []runs.Diagnostic) []protocol.DependencyDiag {
	out := make([]protocol.DependencyDiag, 0, len(diags))
	for _, d := range diags {
		out = append(out, protocol.DependencyDiag(d))
	}
	return out
}

// errShuttingDown refuses what would start something once the service
// stops: -32000, with the run manager's message.
func errShuttingDown() error {
	return jsonrpc.Errorf(jsonrpc.Overloaded, "%s", runs.ErrShuttingDown.Error())
}

// recordsChanged is called after a deployment or an artifact was written:
// the run manager prepares what depends on them again.
func (s *Service) recordsChanged() { s.Runs.RecordsChanged() }
