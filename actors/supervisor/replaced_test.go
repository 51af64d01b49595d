package supervisor_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// replacedEvents waits for n session_replaced admin events in st.
func replacedEvents(t *testing.T, st *store.Memory, n int) []store.Event {
	t.Helper()
	is := is.New(t)
	return poll.Value(t, "session_replaced events recorded", patience, func() ([]store.Event, bool) {
		all, err := st.ListEvents(ctx(t), 0, 100)
		is.NoErr(err)
		var events []store.Event
		for _, e := range all {
			if e.Kind == supervisor.EventSessionReplaced {
				events = append(events, e)
			}
		}
		return events, len(events) >= n
	})
}

func TestAReplacedSessionIsAnAdminEventWithItsGenerationsAndCause(t *testing.T) {
	is := is.New(t)
	inMemory := fakes.NewInMemory(nil)
	st := store.NewMemory()
	opts := testOptions()
	opts.Events = st
	s := startWith(t, inMemory, st, opts)

	s.mustCall(t, "fake.one", "counter", nil)
	inMemory.KillAll()
	e := replacedEvents(t, st, 1)[0]
	is.Equal(*e.ConnectionID, "fake.one")
	is.Equal(e.Payload["old_generation"], float64(1))
	is.Equal(e.Payload["new_generation"], float64(2))
	is.Equal(e.Payload["cause"], session.CauseClosed)
	is.True(e.Payload["error"] != nil)
	_, scoped := e.Payload["scope"]
	is.True(!scoped) // the shared session

	// A session actor that crashed: its successor's session replaces it.
	s.mustCall(t, "fake.one", "counter", nil)
	s.panicSession(t, "fake.one")
	s.mustCall(t, "fake.one", "counter", nil)
	e = replacedEvents(t, st, 2)[1]
	is.Equal(e.Payload["old_generation"], float64(2))
	is.Equal(e.Payload["new_generation"], float64(3))
	is.Equal(e.Payload["cause"], session.CauseActorRestarted)
}
