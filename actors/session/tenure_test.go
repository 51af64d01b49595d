package session_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// tenure is a cluster tenure the test ends at will; its generations start
// after 40, as another node's sessions had used those.
type tenure struct {
	ended atomic.Bool
	gen   atomic.Int64
}

func newTenure() *tenure {
	t := &tenure{}
	t.gen.Store(40)
	return t
}

func (t *tenure) Node() string  { return "node-b" }
func (t *tenure) Epoch() int64  { return 7 }
func (t *tenure) Valid() bool   { return !t.ended.Load() }
func (t *tenure) end()          { t.ended.Store(true) }
func (t *tenure) claimed() bool { return t.gen.Load() > 40 }

func (t *tenure) NextGeneration(context.Context) (int64, error) {
	if t.ended.Load() {
		return 0, errors.New("lease lost")
	}
	return t.gen.Add(1), nil
}

func TestATenuredSessionTakesItsGenerationFromTheTenureAndNamesIt(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.Tenure = newTenure()
	e, pid := spawn(t, fakes.NewInMemory(nil), opts)

	r := call(t, e, pid, "counter", nil)
	is.NoErr(r.Error.Err())
	is.Equal(r.Generation, int64(41)) // the cluster's next generation, not the node's first
	is.Equal(r.Node, "node-b")
	is.Equal(r.Epoch, int64(7))
}

func TestACallAfterTheTenureEndedIsNotSentUpstream(t *testing.T) {
	is := is.New(t)
	ten := newTenure()
	opts := testOptions()
	opts.Tenure = ten
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	e, pid := spawn(t, rec, opts)
	is.NoErr(call(t, e, pid, "counter", nil).Error.Err()) // the session opens and serves

	ten.end()
	r := call(t, e, pid, "counter", nil)
	is.True(errors.Is(r.Error.Err(), session.ErrNotOwner))    // refused: another node may own the connection now
	is.True(errors.Is(r.Error.Err(), session.ErrUnavailable)) // which callers treat as unavailable
	is.Equal(len(rec.ToolCalls()), 1)                         // only the first call reached the server
}

func TestANodeWhoseTenureEndedOpensNoSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		ten := newTenure()
		ten.end()
		opts := testOptions()
		opts.Tenure = ten
		rec := fakes.NewRecording(fakes.NewInMemory(nil))
		e, pid := spawn(t, rec, opts)

		r := send(e, pid, "counter", nil, 300*time.Millisecond)
		got := await(t, r)
		is.True(got.Error != nil)          // the call fails
		is.Equal(rec.SessionsCreated(), 0) // no upstream session was opened
		is.True(!ten.claimed())            // and no generation was claimed
	})
}
