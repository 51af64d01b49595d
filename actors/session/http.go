package session

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
)

// HTTP reaches MCP servers over streamable HTTP (or, for kind "sse", the
// legacy HTTP+SSE transport), sending the connection's
// configured headers with every request, and its credentials, which win
// over a configured header of the same name.
type HTTP struct {
	// Client is the base HTTP client; nil (or one without a Transport)
	// uses Pool.
	Client *http.Client
	// Pool, when set (and Client brings no Transport), is the connection
	// pool every session of this factory shares; nil gives each session a
	// pool of its own, cloned from http.DefaultTransport and closed with
	// the session.
	Pool *Pool
	// Credentials authorize the requests; nil sends none.
	Credentials Credentials
	// IdleConnsPerHost is how many idle connections a session's own pool
	// (without a shared Pool) keeps per host; 0 is DefaultOptions().MaxInFlight plus one, so that
	// a session's calls at their cap, and its ping, reuse their
	// connections instead of opening new ones (http.DefaultTransport
	// keeps 2).
	IdleConnsPerHost int
	// MaxResultBytes bounds one answer of a connection that sets no
	// max_result_bytes (0: config.DefaultMaxResultBytes); see
	// resultBound.
	MaxResultBytes int64
}

// pool returns the connection pool of one session: a clone of
// http.DefaultTransport that keeps enough idle connections per host for
// the session's concurrent requests.
func (h HTTP) pool() *http.Transport {
	perHost := h.IdleConnsPerHost
	if perHost <= 0 {
		perHost = DefaultOptions().MaxInFlight + 1
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = perHost
	t.MaxIdleConns = max(t.MaxIdleConns, perHost)
	return t
}

// NewTransport returns a streamable HTTP or SSE client transport for conn.
func (h HTTP) NewTransport(conn config.Connection) (mcp.Transport, error) {
	if conn.Transport.URL == "" {
		return nil, fmt.Errorf("connection %q: http transport needs a url", conn.ID)
	}
	var base http.RoundTripper
	var pool *http.Transport
	switch {
	case h.Client != nil && h.Client.Transport != nil:
		base = h.Client.Transport
	case h.Pool != nil:
		base = h.Pool.transport // shared: not closed with the session
	default:
		pool = h.pool()
		base = pool
	}
	var login loginHolder
	if h.Credentials != nil {
		ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
		defer cancel()
		authorized, err := h.Credentials.HTTP(ctx, conn, base)
		if err != nil {
			return nil, err
		}
		base = authorized
		login, _ = authorized.(loginHolder)
	}
	// The configured headers are set first, the credentials after them.
	watch := watch{expired: &atomic.Bool{}, keep: &atomic.Bool{}, pool: pool, peer: &peerHook{}, login: login, notices: &noticeHook{}}
	origin, err := url.Parse(conn.Transport.URL)
	if err != nil {
		return nil, fmt.Errorf("connection %q: url %s: %w", conn.ID, config.ShowURL(conn.Transport.URL), err)
	}
	limit := resultLimit(conn, h.MaxResultBytes)
	client := &http.Client{
		Transport: resultBound{
			base:    keepSession{base: expiryWatch{base: headerTransport{base: base, headers: conn.Transport.Headers, origin: origin}, expired: watch.expired, peer: watch.peer}, keep: watch.keep},
			limit:   limit,
			log:     slog.With("connection", conn.ID),
			notices: watch.notices,
		},
		CheckRedirect: withoutReferer,
	}
	// go-sdk's own bound on an event fails the whole session; ours holds
	// first, and go-sdk's only lets the answer that replaces an oversize
	// event through.
	maxEvent := int(limit + limitSlack)
	if conn.Transport.Kind == config.TransportSSE {
		return &sseTransport{SSEClientTransport: &mcp.SSEClientTransport{Endpoint: conn.Transport.URL, HTTPClient: client, MaxEventSize: maxEvent}, watch: watch}, nil
	}
	return &httpTransport{StreamableClientTransport: &mcp.StreamableClientTransport{Endpoint: conn.Transport.URL, HTTPClient: client, MaxEventSize: maxEvent}, watch: watch}, nil
}

// maxRedirects bounds the redirects one request follows.
const maxRedirects = 10

// withoutReferer follows up to maxRedirects redirects without the Referer
// header net/http would add: it is the previous URL, query included, and
// the query may hold a secret (?api_key=...).
func withoutReferer(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	req.Header.Del("Referer")
	return nil
}

// httpTransport is a streamable HTTP client transport that notices when
// the server no longer knows its session: it answers a request that
// carries the session id with 404 (as the spec says) or 400 (as some
// servers do). go-sdk reports only a 404 without a JSON-RPC body, as
// mcp.ErrSessionMissing; the session actor asks SessionExpired for the
// rest.
type httpTransport struct {
	*mcp.StreamableClientTransport
	watch
}

// quieter is implemented by the transports that can go without a
// standing stream for the server's notifications (see Options.NoListen).
type quieter interface {
	// quiet is called before Connect.
	quiet()
}

// quiet opens no standalone GET stream.
func (t *httpTransport) quiet() { t.DisableStandaloneSSE = true }

// sseTransport is the legacy HTTP+SSE client transport, noticing an
// expired session as httpTransport does.
type sseTransport struct {
	*mcp.SSEClientTransport
	watch
}

// watch is what the HTTP transports add to go-sdk's: whether the server
// refused a request of the session as unknown, the session's own
// connection pool (nil when the factory's client or Pool brings one), and
// where the end of its event stream is reported (see peerWatcher).
type watch struct {
	expired *atomic.Bool
	// keep, once set, keeps the upstream session when the session
	// closes (see keepSession).
	keep  *atomic.Bool
	pool  *http.Transport
	peer  *peerHook
	login loginHolder // the credentials' round tripper, when it can need a login
	// notices gets the progress and log notifications its event streams
	// carry (see noticeHooker).
	notices *noticeHook
}

// hookNotices implements noticeHooker.
func (w watch) hookNotices(notice func(method string, params json.RawMessage)) {
	w.notices.hookNotices(notice)
}

// loginHolder is a credentials round tripper that can find that its
// source needs a login (an OAuth source): NeedsLogin is then the error
// that says so, with the authorization host (see credentials.LoginError).
type loginHolder interface{ NeedsLogin() error }

// loginWatcher is implemented by the transports whose requests can find
// that their source needs a login.
type loginWatcher interface{ needsLogin() error }

// needsLogin implements loginWatcher.
func (w watch) needsLogin() error {
	if w.login == nil {
		return nil
	}
	return w.login.NeedsLogin()
}

// watchPeer implements peerWatcher.
func (w watch) watchPeer(gone func(err error, certain bool)) { w.peer.watchPeer(gone) }

// SessionExpired reports whether the server refused a request of the
// session with 400 or 404.
func (w watch) SessionExpired() bool { return w.expired.Load() }

// CloseIdleConnections closes the idle connections of the session's own
// pool, once the session is closed: no later session reuses them.
func (w watch) CloseIdleConnections() {
	if w.pool != nil {
		w.pool.CloseIdleConnections()
	}
}

// closeIdle closes the idle connections of transport t's own pool, if it
// has one.
func closeIdle(t mcp.Transport) {
	if c, ok := t.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// expiryWatch flags a 400 or 404 answer to a POST that belongs to a
// session: one that carries an Mcp-Session-Id header (streamable HTTP) or
// a sessionid query parameter (HTTP+SSE); and it reports to peer the end
// of the event stream a GET opened, and a GET of the session's that failed
// to reopen one.
type expiryWatch struct {
	base    http.RoundTripper
	expired *atomic.Bool
	peer    *peerHook
}

func (w expiryWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(r)
	inSession := r.Header.Get("Mcp-Session-Id") != "" || r.URL.Query().Get("sessionid") != ""
	if err == nil && r.Method == http.MethodPost && inSession &&
		(resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusBadRequest) {
		w.expired.Store(true)
	}
	if r.Method == http.MethodGet && inSession {
		watchReopen(r, resp, err, w.peer)
	}
	if err == nil {
		watchStream(r, resp, w.peer)
	}
	return resp, err
}

// keepSession keeps the upstream session of a streamable HTTP session
// that left an MCP task running on it (keepUpstream): go-sdk ends a
// session it closes with a DELETE, which would end the task with it (a
// server keeps a session's tasks with the session), so that DELETE is
// answered here, 204, and never sent. The session is then the server's
// to expire; a restarted mcpflow polls the task under its id.
type keepSession struct {
	base http.RoundTripper
	keep *atomic.Bool
}

func (k keepSession) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodDelete && k.keep.Load() {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return &http.Response{StatusCode: http.StatusNoContent, Status: "204 No Content", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	return k.base.RoundTrip(r)
}

// headerTransport adds fixed headers to every request to the configured
// URL's origin, and to no other: a redirect to another host, or an SSE
// endpoint event naming one, gets none of them.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	origin  *url.URL
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && config.SameOrigin(r.URL, t.origin) {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}
