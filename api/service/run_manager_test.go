package service

import (
	"errors"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// A start or resume refused because the node's cluster membership lapsed
// is -32000, "retry", with the manager's message: as a shutdown is.
func TestALapsedMembershipIsAnsweredRetryLater(t *testing.T) {
	is := is.New(t)
	var answered *jsonrpc.Error
	is.True(errors.As(runsErr(fmt.Errorf("run run_1: %w", runs.ErrNotMember)), &answered))
	is.Equal(answered.Code, jsonrpc.Overloaded)
	is.Equal(answered.Data, jsonrpc.ErrorData{Message: runs.ErrNotMember.Error()})
}
