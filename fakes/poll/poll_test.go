package poll_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/fakes/poll"
)

// patience bounds every wait in these tests.
const patience = 5 * time.Second

// recorder is a testing.TB that records a failure and its log instead of
// failing the real test.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed bool
	logs   []string
}

func (r *recorder) Helper() {}

func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recorder) Log(args ...any) { r.Logf("%s", fmt.Sprint(args...)) }

func (r *recorder) Fail() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
}

func (r *recorder) FailNow() {
	r.Fail()
	runtime.Goexit()
}

// run calls f with a recorder on a goroutine of its own (FailNow ends
// that goroutine) and returns the recorder once f has returned or failed.
func run(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	select {
	case <-done:
	case <-time.After(patience):
		is.New(t).Fail() // the helper returns in time
	}
	return r
}

func TestForReturnsOnceTheConditionHolds(t *testing.T) {
	is := is.New(t)
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	r := run(t, func(tb testing.TB) {
		poll.For(tb, "three increments", patience, func() bool { return n.Load() == 3 })
	})
	is.True(!r.failed) // the condition held in time
	is.Equal(n.Load(), int32(3))
}

func TestForFailsSayingWhatItWaitedFor(t *testing.T) {
	is := is.New(t)
	r := run(t, func(tb testing.TB) {
		poll.For(tb, "the impossible", 10*time.Millisecond, func() bool { return false })
		tb.Log("after the failure") // not reached: For ends the test
	})
	is.True(r.failed) // the test fails
	joined := strings.Join(r.logs, "\n")
	is.True(strings.Contains(joined, "not within 10ms: the impossible")) // it says what and how long
	is.True(!strings.Contains(joined, "after the failure"))              // and stops the test there
}

func TestValueReturnsWhatTheGetterGaveWhenItWasOK(t *testing.T) {
	is := is.New(t)
	calls := 0
	got := poll.Value(t, "the third call", patience, func() (int, bool) {
		calls++
		return calls * 10, calls == 3
	})
	is.Equal(got, 30)
}

func TestUntilReportsAConditionThatNeverHeld(t *testing.T) {
	is := is.New(t)
	checks := 0
	held := poll.Until(20*time.Millisecond, func() bool { checks++; return false })
	is.True(!held)      // it reports false
	is.True(checks > 1) // after checking more than once
}
