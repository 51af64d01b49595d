package session

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestBackoffDoublesFromTheMinimumUpToTheCap(t *testing.T) {
	is := is.New(t)
	o := Options{MinBackoff: 50 * time.Millisecond, MaxBackoff: 300 * time.Millisecond}
	var got []time.Duration
	for n := 1; n <= 5; n++ {
		got = append(got, o.backoff(n))
	}
	is.Equal(got, []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond})
}

func TestDefaultOptionsBoundEveryWait(t *testing.T) {
	is := is.New(t)
	o := DefaultOptions()
	is.Equal(o.ProtocolVersion, "2025-11-25") // session-ful, so keepalive works
	is.True(o.ConnectTimeout > 0 && o.CallTimeout > 0 && o.CloseTimeout > 0)
	is.True(o.MaxInFlight > 0 && o.MaxQueued > 0)
	is.True(o.MinBackoff > 0 && o.MinBackoff <= o.MaxBackoff)
}
