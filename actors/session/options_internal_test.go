package session

import (
	"testing"

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
