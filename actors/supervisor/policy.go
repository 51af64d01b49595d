package supervisor

import (
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
	ms(s.StablePeriodMS, &p.StablePeriod)
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

// WithConfig returns o with the server-level supervision of a config
// file: the default policy of every source and the bound on concurrent
// connects.
func (o Options) WithConfig(s *config.Supervision) Options {
	o.Session.Policy = PolicyFor(o.Session.Policy, s)
	if s != nil && s.MaxConcurrentConnects > 0 {
		o.MaxConcurrentConnects = s.MaxConcurrentConnects
	}
	return o
}
