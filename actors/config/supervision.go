package config

import (
	"errors"
	"fmt"
)

// Supervision tunes how mcpflow reopens a connection's session after it
// dies or a connect fails (see session.Policy): a session that proved
// itself (it answered a call, or stayed open ProvedAfterMS) is reopened at
// once; a failed start (a connect that failed, a session that died
// unproven) is retried after a capped, jittered exponential backoff, and
// too many of them in a row degrade the connection (calls fail fast)
// until a background probe connects. Set on the server it is the default of every source; set on a
// source it overrides the fields it names. Durations are milliseconds; an
// absent field keeps the default.
type Supervision struct {
	MinBackoffMS int      `json:"min_backoff_ms,omitempty"`
	MaxBackoffMS int      `json:"max_backoff_ms,omitempty"`
	Jitter       *float64 `json:"jitter,omitempty"` // 0 to 1, the fraction of each wait drawn at random
	// ProvedAfterMS is how long a session that answers no call must stay
	// open to prove itself (default 10000); one that answers a call
	// proves itself at once.
	ProvedAfterMS int `json:"proved_after_ms,omitempty"`
	// StablePeriodMS is the former name of ProvedAfterMS, read when
	// that is absent.
	StablePeriodMS int `json:"stable_period_ms,omitempty"`
	// MaxRestarts failed starts within RestartWindowMS, with no session
	// proving itself between them, are retried; the next degrades the
	// connection. 0 never degrades.
	MaxRestarts     *int `json:"max_restarts,omitempty"`
	RestartWindowMS int  `json:"restart_window_ms,omitempty"`
	ProbeIntervalMS int  `json:"probe_interval_ms,omitempty"`
	// KeepAliveMS is how often an open session is pinged. Default 30000.
	KeepAliveMS int `json:"keep_alive_ms,omitempty"`
	// PingTimeoutMS is how long a ping waits for its answer before it
	// counts as missed, at most KeepAliveMS (default 10000); PingFailures
	// pings missed in a row end the session as hung (default 3). A ping
	// that finds the session closed ends it at once.
	PingTimeoutMS int `json:"ping_timeout_ms,omitempty"`
	PingFailures  int `json:"ping_failures,omitempty"`
	// Listen is whether an HTTP session holds a stream open to hear the
	// server's notifications (tools, resources and prompts list_changed):
	// true by default. false saves each idle session a connection and
	// three goroutines, and a changed catalog is then found when it turns
	// stale (300 s) instead of at once.
	Listen *bool `json:"listen,omitempty"`
	// MaxConcurrentConnects bounds the connects in progress across every
	// source at once; server level only.
	MaxConcurrentConnects int `json:"max_concurrent_connects,omitempty"`
	// MaxRunSessions caps the per-run sessions (bindings with "session":
	// "run") open at once across every source; server level only.
	MaxRunSessions int `json:"max_run_sessions,omitempty"`
	// MaxConcurrentRefreshes bounds the catalogs listed at once in the
	// background (at a start, the sources with no stored catalog, then
	// those whose stored one is stale); 0 is two per CPU, at most 16.
	// Server level only.
	MaxConcurrentRefreshes int `json:"max_concurrent_refreshes,omitempty"`
	// WarmUpMS is how long a start waits for the first catalogs of the
	// sources that have none stored before it serves (they go on listing
	// in the background after it); absent is 10000, 0 serves at once.
	// Sources with a stored catalog are never waited for. Server level
	// only.
	WarmUpMS *int `json:"warm_up_ms,omitempty"`
}

// Validate checks the values a supervision block sets.
func (s *Supervision) Validate() error {
	if s == nil {
		return nil
	}
	var errs []error
	for name, v := range map[string]int{
		"min_backoff_ms": s.MinBackoffMS, "max_backoff_ms": s.MaxBackoffMS, "stable_period_ms": s.StablePeriodMS, "proved_after_ms": s.ProvedAfterMS,
		"restart_window_ms": s.RestartWindowMS, "probe_interval_ms": s.ProbeIntervalMS, "max_concurrent_connects": s.MaxConcurrentConnects,
		"max_run_sessions": s.MaxRunSessions, "keep_alive_ms": s.KeepAliveMS,
		"ping_timeout_ms": s.PingTimeoutMS, "ping_failures": s.PingFailures,
		"max_concurrent_refreshes": s.MaxConcurrentRefreshes,
	} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("supervision: %s must not be negative", name))
		}
	}
	if s.MinBackoffMS > 0 && s.MaxBackoffMS > 0 && s.MinBackoffMS > s.MaxBackoffMS {
		errs = append(errs, errors.New("supervision: min_backoff_ms must not exceed max_backoff_ms"))
	}
	if s.PingTimeoutMS > 0 && s.KeepAliveMS > 0 && s.PingTimeoutMS > s.KeepAliveMS {
		errs = append(errs, errors.New("supervision: ping_timeout_ms must not exceed keep_alive_ms"))
	}
	if s.Jitter != nil && (*s.Jitter < 0 || *s.Jitter > 1) {
		errs = append(errs, errors.New("supervision: jitter must be between 0 and 1"))
	}
	if s.WarmUpMS != nil && *s.WarmUpMS < 0 {
		errs = append(errs, errors.New("supervision: warm_up_ms must not be negative"))
	}
	if s.MaxRestarts != nil && *s.MaxRestarts < 0 {
		errs = append(errs, errors.New("supervision: max_restarts must not be negative"))
	}
	return errors.Join(errs...)
}
