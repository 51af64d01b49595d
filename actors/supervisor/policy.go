package supervisor

import (
	"cmp"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
)

// PolicyFor returns base with what s sets: the supervision policy of a
// source whose config (or the server's) says s. A nil s is base.
func PolicyFor(base session.Policy, s *config.Supervision) session.Policy {
	if s == nil {
		return base
	}
	ms := func(v int, d *time.Duration) {
		if v > 0 {
			*d = time.Duration(v) * time.Millisecond
		}
	}
	p := base
	ms(s.MinBackoffMS, &p.MinBackoff)
	ms(s.MaxBackoffMS, &p.MaxBackoff)
	ms(cmp.Or(s.ProvedAfterMS, s.StablePeriodMS), &p.ProvedAfter)
	ms(s.RestartWindowMS, &p.RestartWindow)
	ms(s.ProbeIntervalMS, &p.ProbeInterval)
	if s.Jitter != nil {
		p.Jitter = *s.Jitter
		if p.Jitter == 0 {
			p.Jitter = -1 // none (0 would inherit)
		}
	}
	if s.MaxRestarts != nil {
		p.MaxRestarts = *s.MaxRestarts
	}
	if p.MaxBackoff < p.MinBackoff {
		p.MaxBackoff = p.MinBackoff
	}
	return p
}

// SessionFor returns base with what s sets: the options of the session
// actors of a source whose config (or the server's) says s — its
// supervision policy, its keepalive (interval, ping timeout and the pings
// missed in a row that end a session) and whether it listens for the
// server's notifications.
func SessionFor(base session.Options, s *config.Supervision) session.Options {
	base.Policy = PolicyFor(base.Policy, s)
	if s == nil {
		return base
	}
	if s.KeepAliveMS > 0 {
		base.KeepAlive = time.Duration(s.KeepAliveMS) * time.Millisecond
	}
	if s.PingTimeoutMS > 0 {
		base.PingTimeout = time.Duration(s.PingTimeoutMS) * time.Millisecond
	}
	if s.PingFailures > 0 {
		base.PingFailures = s.PingFailures
	}
	if s.Listen != nil {
		base.NoListen = !*s.Listen
	}
	return base
}

// WithConfig returns o with the server-level supervision of a config
// file: the default policy of every source, the bounds on concurrent
// connects and background catalog refreshes, and the cap on per-run
// sessions.
func (o Options) WithConfig(s *config.Supervision) Options {
	o.Session = SessionFor(o.Session, s)
	if s != nil && s.MaxConcurrentConnects > 0 {
		o.MaxConcurrentConnects = s.MaxConcurrentConnects
	}
	if s != nil && s.MaxRunSessions > 0 {
		o.MaxRunSessions = s.MaxRunSessions
	}
	if s != nil && s.MaxConcurrentRefreshes > 0 {
		o.MaxConcurrentRefreshes = s.MaxConcurrentRefreshes
	}
	return o
}
