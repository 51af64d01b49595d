package session

import "net/http"

// SharedIdlePerHost is how many idle connections a shared Pool keeps per
// upstream host: enough for the bursts of the many sessions a host may
// serve, while an idle one keeps none.
const SharedIdlePerHost = 256

// Pool is an HTTP connection pool that every session of an HTTP factory
// shares (see HTTP.Pool). A session's own pool keeps at least one idle
// connection per session (its keepalive pings keep it from expiring): two
// goroutines and two buffers per idle session, 10,000 connections for
// 10,000 sessions to one host. Shared, the sessions' requests reuse the
// same few connections, and an idle session holds none of its own but
// its notification stream. The requests stay each session's own: its
// headers and credentials are set per request, above the pool. Safe for
// concurrent use; a nil *Pool is none.
type Pool struct {
	transport *http.Transport
}

// NewPool returns a pool cloned from http.DefaultTransport that keeps
// SharedIdlePerHost idle connections per host (and at least as many as
// one session's concurrent calls and ping).
func NewPool() *Pool {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(SharedIdlePerHost, DefaultOptions().MaxInFlight+1)
	t.MaxIdleConns = 0 // no bound across hosts beyond the per-host one
	return &Pool{transport: t}
}

// Close closes the pool's idle connections; the connections in use close
// as their requests end. Call it once no session uses the pool.
func (p *Pool) Close() {
	if p != nil {
		p.transport.CloseIdleConnections()
	}
}
