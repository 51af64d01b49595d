package reply_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/reply"
)

// Sentinels for the tests: unavailable, and degraded, a kind of
// unavailable.
var (
	errUnavailable = reply.Register("test_unavailable", errors.New("unavailable"))
	errDegraded    = reply.Register("test_degraded", fmt.Errorf("degraded: %w", errUnavailable))
	errLost        = reply.Register("test_lost", errors.New("lost"))
)

// acrossTheWire encodes f and decodes it, as a message crossing nodes.
func acrossTheWire(t *testing.T, f *reply.Failure) *reply.Failure {
	t.Helper()
	is := is.New(t)
	data, err := json.Marshal(f)
	is.NoErr(err)
	var got *reply.Failure
	is.NoErr(json.Unmarshal(data, &got))
	return got
}

func TestAFailureKeepsTheMessageAndTheSentinel(t *testing.T) {
	is := is.New(t)
	err := fmt.Errorf("connection %q: %w: session generation 3 ended", "fs.default", errLost)
	f := acrossTheWire(t, reply.Fail(err))
	is.Equal(f.Code, "test_lost")
	back := f.Err()
	is.Equal(back.Error(), err.Error()) // the same text
	is.True(errors.Is(back, errLost))   // and the same sentinel
	is.True(!errors.Is(back, errUnavailable))
}

func TestAFailureTakesTheMostSpecificCode(t *testing.T) {
	is := is.New(t)
	f := acrossTheWire(t, reply.Fail(fmt.Errorf("connection x: %w", errDegraded)))
	is.Equal(f.Code, "test_degraded")           // not test_unavailable, which it also is
	is.True(errors.Is(f.Err(), errDegraded))    // degraded
	is.True(errors.Is(f.Err(), errUnavailable)) // and so unavailable
	is.Equal(reply.Fail(errUnavailable).Code, "test_unavailable")
}

func TestTheContextsErrorsHaveCodes(t *testing.T) {
	is := is.New(t)
	f := acrossTheWire(t, reply.Fail(fmt.Errorf("call a.b: %w", context.DeadlineExceeded)))
	is.Equal(f.Code, reply.CodeDeadlineExceeded)
	is.True(errors.Is(f.Err(), context.DeadlineExceeded))
	is.True(errors.Is(reply.Fail(context.Canceled).Err(), context.Canceled))
}

func TestAnErrorWithNoSentinelKeepsItsMessage(t *testing.T) {
	is := is.New(t)
	f := acrossTheWire(t, reply.Fail(errors.New(`unknown connection "x"`)))
	is.Equal(f.Code, "")
	is.Equal(f.Err().Error(), `unknown connection "x"`)
	is.True(errors.Unwrap(f.Err()) == nil)

	unknown := reply.Failure{Code: "from_a_newer_node", Message: "m"}
	is.Equal(unknown.Err().Error(), "m") // an unknown code is only a message
}

func TestNoErrorIsNoFailure(t *testing.T) {
	is := is.New(t)
	is.True(reply.Fail(nil) == nil)
	var none *reply.Failure
	is.NoErr(none.Err())
	is.True(acrossTheWire(t, nil) == nil) // null on the wire
}

func TestRegisteringACodeTwicePanics(t *testing.T) {
	is := is.New(t)
	defer func() { is.True(recover() != nil) }() // codes are part of the messages: no two meanings
	reply.Register("test_lost", errors.New("another"))
}
