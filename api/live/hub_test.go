package live_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/live"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// patience bounds every wait of these tests.
const patience = 5 * time.Second

// recorder is a connection that takes every notification at once and
// passes on the method of each.
type recorder struct {
	methods chan string
	done    chan struct{}
}

func (r *recorder) Notify(_ context.Context, method string, _ any) error {
	select {
	case r.methods <- method:
		return nil
	default:
		return errors.New("the test's connection is full")
	}
}

func (r *recorder) Done() <-chan struct{} { return r.done }

// subscriber returns a request of a new connection whose reply is queued.
func subscriber(t *testing.T) (*recorder, *rpc.Request) {
	t.Helper()
	c := &recorder{methods: make(chan string, 16), done: make(chan struct{})}
	t.Cleanup(func() { close(c.done) })
	ctx, release := rpc.WithNotifier(t.Context(), c)
	release()
	rn, ok := rpc.NotifierFrom(ctx)
	is.New(t).True(ok)
	return c, rn
}

func TestCloseEndsEverySubscriptionAndRefusesNewOnes(t *testing.T) {
	is := is.New(t)
	mem := store.NewMemory()
	hub := live.NewHub(mem, live.Options{})
	st := store.Observed(mem, hub, nil)
	run := store.Run{ID: "run-1", Status: store.RunRunning, UpdatedAt: time.Now().UTC()}
	is.NoErr(st.CreateRun(t.Context(), run, nil))

	_, runHead, err := mem.ReadRunEvents(t.Context(), run.ID, 0, 0)
	is.NoErr(err)
	adminHead, err := mem.LastEventSeq(t.Context())
	is.NoErr(err)

	conn, rn := subscriber(t)
	_, err = hub.SubscribeRun(rn, run.ID, 0, runHead) // from its first event
	is.NoErr(err)
	_, err = hub.SubscribeAdmin(rn, adminHead, adminHead) // from now on
	is.NoErr(err)
	select {
	case m := <-conn.methods:
		is.Equal(m, protocol.NotifyRunEvent) // the run's first event, replayed
	case <-time.After(patience):
		t.Fatalf("no event after %s", patience)
	}

	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	is.NoErr(hub.Close(ctx))             // every goroutine of the hub returns
	is.Equal(hub.OpenSubscriptions(), 0) // and every subscription has ended
	is.Equal(len(conn.methods), 0)       // with no notification: no lag, nothing more

	_, err = hub.SubscribeRun(rn, run.ID, 0, runHead)
	is.True(errors.Is(err, live.ErrClosed)) // nothing opens after Close
	_, err = hub.SubscribeAdmin(rn, adminHead, adminHead)
	is.True(errors.Is(err, live.ErrClosed))
}
