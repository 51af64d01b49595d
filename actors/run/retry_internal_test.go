package run

import (
	"errors"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

func TestAnAnswerTooLargeIsNotRetriedButAnotherFailureIs(t *testing.T) {
	is := is.New(t)
	// As the run gets them: a session's failure back from its reply.
	tooLarge := reply.Fail(fmt.Errorf("call a.b.t: %w: the answer of source \"a.b\" passed its limit", session.ErrResultTooLarge)).Err()
	is.True(!retryable(tooLarge))                                                     // an upstream answer over the bound
	is.True(!retryable(fmt.Errorf("step: %w", workflow.ErrOutputTooLarge)))           // a built-in's output over it
	is.True(!retryable(reply.Fail(session.ErrCancelled).Err()))                       // a cancelled call
	is.True(retryable(reply.Fail(errors.New("upstream said no")).Err()))              // any other failure
	is.True(retryable(reply.Fail(fmt.Errorf("x: %w", session.ErrUnavailable)).Err())) // a session not there yet
}
