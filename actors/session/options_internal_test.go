package session

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestDefaultOptionsBoundEveryWait(t *testing.T) {
	is := is.New(t)
	o := DefaultOptions()
	is.Equal(o.ProtocolVersion, "2025-11-25") // session-ful, so keepalive works
	is.True(o.ConnectTimeout > 0 && o.CallTimeout > 0 && o.CloseTimeout > 0)
	is.True(o.MaxInFlight > 0 && o.MaxQueued > 0)
	is.NoErr(o.Policy.Validate())
}

func TestThePingTimeoutDefaultsAndNeverExceedsTheInterval(t *testing.T) {
	is := is.New(t)
	o := DefaultOptions()
	is.Equal(o.pingTimeout(), DefaultPingTimeout)
	is.Equal(o.pingFailures(), DefaultPingFailures)
	o.KeepAlive, o.PingTimeout, o.PingFailures = 4*time.Second, 0, 0
	is.Equal(o.pingTimeout(), 4*time.Second) // capped by the interval
	is.Equal(o.pingFailures(), 3)
	o.PingTimeout, o.PingFailures = time.Second, 5
	is.Equal(o.pingTimeout(), time.Second)
	is.Equal(o.pingFailures(), 5)
}
