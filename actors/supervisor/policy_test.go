package supervisor_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

func TestPolicyForOverridesOnlyWhatTheConfigSets(t *testing.T) {
	is := is.New(t)
	base := session.DefaultPolicy()
	is.Equal(supervisor.PolicyFor(base, nil), base)

	zero, restarts := 0.0, 0
	p := supervisor.PolicyFor(base, &config.Supervision{MinBackoffMS: 10, MaxBackoffMS: 500, Jitter: &zero, MaxRestarts: &restarts, ProbeIntervalMS: 2000})
	is.Equal(p.MinBackoff, 10*time.Millisecond)
	is.Equal(p.MaxBackoff, 500*time.Millisecond)
	is.True(p.Jitter < 0)      // an explicit 0: no jitter
	is.Equal(p.MaxRestarts, 0) // an explicit 0: never degrade
	is.Equal(p.ProbeInterval, 2*time.Second)
	is.Equal(p.ProvedAfter, base.ProvedAfter) // not set: the default
	is.Equal(p.RestartWindow, base.RestartWindow)
	is.NoErr(p.Validate())
}

func TestPolicyForReadsTheProvedAfterTimeAndItsFormerName(t *testing.T) {
	is := is.New(t)
	base := session.DefaultPolicy()
	is.Equal(supervisor.PolicyFor(base, &config.Supervision{ProvedAfterMS: 2500}).ProvedAfter, 2500*time.Millisecond)
	is.Equal(supervisor.PolicyFor(base, &config.Supervision{StablePeriodMS: 4000}).ProvedAfter, 4*time.Second) // the former name
	is.Equal(supervisor.PolicyFor(base, &config.Supervision{ProvedAfterMS: 2500, StablePeriodMS: 4000}).ProvedAfter, 2500*time.Millisecond)
}

func TestOptionsWithConfigSetTheDefaultPolicyAndTheConnectBound(t *testing.T) {
	is := is.New(t)
	n := 3
	o := supervisor.DefaultOptions().WithConfig(&config.Supervision{MaxRestarts: &n, MaxConcurrentConnects: 2})
	is.Equal(o.Session.Policy.MaxRestarts, 3)
	is.Equal(o.MaxConcurrentConnects, 2)
	is.Equal(supervisor.DefaultOptions().WithConfig(nil), supervisor.DefaultOptions())
}

func TestSessionForSetsTheKeepaliveWhereTheConfigDoes(t *testing.T) {
	is := is.New(t)
	base := session.DefaultOptions()
	is.Equal(supervisor.SessionFor(base, nil).KeepAlive, base.KeepAlive)
	o := supervisor.SessionFor(base, &config.Supervision{KeepAliveMS: 4000, MaxBackoffMS: 900})
	is.Equal(o.KeepAlive, 4*time.Second)
	is.Equal(o.Policy.MaxBackoff, 900*time.Millisecond)
	is.Equal(supervisor.DefaultOptions().WithConfig(&config.Supervision{KeepAliveMS: 1500}).Session.KeepAlive, 1500*time.Millisecond)
}

func TestSessionForSetsThePingTimeoutAndFailuresWhereTheConfigDoes(t *testing.T) {
	is := is.New(t)
	base := session.DefaultOptions()
	o := supervisor.SessionFor(base, &config.Supervision{KeepAliveMS: 4000})
	is.Equal(o.PingTimeout, base.PingTimeout) // absent: kept
	is.Equal(o.PingFailures, base.PingFailures)
	server := supervisor.DefaultOptions().WithConfig(&config.Supervision{PingTimeoutMS: 5000, PingFailures: 4}).Session
	is.Equal(server.PingTimeout, 5*time.Second)
	is.Equal(server.PingFailures, 4)
	source := supervisor.SessionFor(server, &config.Supervision{PingFailures: 6}) // a source overrides what it names
	is.Equal(source.PingTimeout, 5*time.Second)
	is.Equal(source.PingFailures, 6)
}

func TestConfigRefusesABadSupervisionBlock(t *testing.T) {
	is := is.New(t)
	_, err := config.Parse([]byte(`{"version":1,"server":{"supervision":{"jitter":2},"sources":[]}}`))
	is.True(err != nil)
	_, err = config.Parse([]byte(`{"version":1,"server":{"sources":[{"kind":"mcp","id":"a.b","transport":{"kind":"stdio","command":"x"},"supervision":{"min_backoff_ms":500,"max_backoff_ms":10}}]}}`))
	is.True(err != nil)
	_, err = config.Parse([]byte(`{"version":1,"server":{"supervision":{"ping_failures":-1},"sources":[]}}`))
	is.True(err != nil)
	_, err = config.Parse([]byte(`{"version":1,"server":{"supervision":{"keep_alive_ms":1000,"ping_timeout_ms":2000},"sources":[]}}`))
	is.True(err != nil) // a ping timeout longer than the interval
	f, err := config.Parse([]byte(`{"version":1,"server":{"supervision":{"max_concurrent_connects":4,"ping_timeout_ms":3000,"ping_failures":5},"sources":[{"kind":"mcp","id":"a.b","transport":{"kind":"stdio","command":"x"},"supervision":{"max_restarts":100}}]}}`))
	is.NoErr(err)
	is.Equal(*f.Server.Sources[0].Supervision.MaxRestarts, 100)
	is.Equal(f.Server.Supervision.PingTimeoutMS, 3000)
	is.Equal(f.Server.Supervision.PingFailures, 5)
}

func TestSessionForListensUnlessTheConfigSaysNot(t *testing.T) {
	is := is.New(t)
	on, off := true, false
	base := session.DefaultOptions()
	is.True(!supervisor.SessionFor(base, nil).NoListen) // listens by default
	server := supervisor.DefaultOptions().WithConfig(&config.Supervision{Listen: &off}).Session
	is.True(server.NoListen)
	is.True(supervisor.SessionFor(server, &config.Supervision{KeepAliveMS: 4000}).NoListen) // absent: kept
	is.True(!supervisor.SessionFor(server, &config.Supervision{Listen: &on}).NoListen)      // a source overrides it
}

func TestWithConfigSetsTheRefreshBound(t *testing.T) {
	is := is.New(t)
	is.Equal(supervisor.DefaultOptions().MaxConcurrentRefreshes, 0) // 0: DefaultRefreshConcurrency
	is.Equal(supervisor.DefaultOptions().WithConfig(&config.Supervision{MaxConcurrentRefreshes: 3}).MaxConcurrentRefreshes, 3)
	is.True(supervisor.DefaultRefreshConcurrency() >= 1 && supervisor.DefaultRefreshConcurrency() <= 16)
}
