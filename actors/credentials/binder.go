package credentials

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
)

// Binder binds connections to their auth records. The session transports
// ask it at every new session, so a saved, changed or deleted record takes
// effect on a connection's next session. It keeps each oauth_refresh_token
// record's access token in memory across sessions.
type Binder struct {
	lookup Lookup
	// Client posts to token endpoints; nil uses a client with a 30 s
	// timeout. Redirects are never followed: a refresh token goes to the
	// token_url and nowhere else.
	Client *http.Client
	// Now is the clock that decides when an access token is due; nil is
	// time.Now.
	Now func() time.Time
	// Records, when set, is where the client an oauth source's discovery
	// registered, a login's tokens, a rotated refresh token and a login
	// that is needed again are saved (sealed at rest by a store that
	// seals); nil keeps rotated tokens in memory only.
	Records store.AuthRecords

	mu     sync.Mutex
	tokens map[string]*tokenSource // by auth id
	// discovering is held by the discovery in progress (see
	// discoverOnce).
	discovering sync.Mutex
}

// NewBinder returns a Binder that finds records with lookup.
func NewBinder(lookup Lookup) *Binder {
	return &Binder{lookup: lookup, tokens: map[string]*tokenSource{}}
}

// resolve finds and parses conn's record; false when it has none.
func (b *Binder) resolve(ctx context.Context, conn config.Connection) (Credential, bool, error) {
	rec, ok, err := b.lookup(ctx, conn)
	if err != nil || !ok {
		return Credential{}, false, err
	}
	c, err := Parse(rec)
	if err != nil {
		return Credential{}, false, fmt.Errorf("connection %q: %w", conn.ID, err)
	}
	return c, true, nil
}

// Check reports whether conn's auth record binds to its transport, with
// the error binding would fail with (ErrNotFound, ErrNotSupported,
// ErrInvalid or a store error), without reaching any server.
func (b *Binder) Check(ctx context.Context, conn config.Connection) error {
	c, ok, err := b.resolve(ctx, conn)
	if err != nil || !ok {
		return err
	}
	return supports(conn, c)
}

// supports reports whether conn's transport takes c's scheme (see
// SchemeSupported).
func supports(conn config.Connection, c Credential) error {
	if SchemeSupported(conn.Transport.Kind, c.Scheme) {
		return nil
	}
	switch conn.Transport.Kind {
	case config.TransportHTTP, config.TransportSSE:
		return fmt.Errorf("connection %q: auth record %q has scheme %q; an %s transport takes bearer, headers, oauth_refresh_token or oauth: %w",
			conn.ID, c.ID, c.Scheme, conn.Transport.Kind, ErrNotSupported)
	case config.TransportStdio:
		return fmt.Errorf("connection %q: auth record %q has scheme %q; a stdio transport takes env only: %w",
			conn.ID, c.ID, c.Scheme, ErrNotSupported)
	}
	return fmt.Errorf("connection %q: auth record %q: transport kind %q takes no credentials: %w", conn.ID, c.ID, conn.Transport.Kind, ErrNotSupported)
}

// SchemeSupported reports whether a transport takes an auth scheme: env
// for stdio; bearer, headers, oauth_refresh_token and oauth for http and
// sse (the legacy HTTP transport, whose requests go through the same
// round tripper). It is the one rule: binding and a source's diagnosis
// both follow it.
func SchemeSupported(transport, scheme string) bool {
	switch transport {
	case config.TransportStdio:
		return scheme == SchemeEnv
	case config.TransportHTTP, config.TransportSSE:
		return scheme == SchemeBearer || scheme == SchemeHeaders || scheme == SchemeOAuthRefreshToken || scheme == SchemeOAuth
	}
	return false
}

// HTTP returns the round tripper that authorizes conn's requests over
// base: base itself when conn has no auth record (for an oauth source, a
// gate that discovers its authorization server on a 401). Requests to
// another origin than conn's URL (a redirect) go out without credentials.
// An oauth source that needs a login fails with a *LoginError.
func (b *Binder) HTTP(ctx context.Context, conn config.Connection, base http.RoundTripper) (http.RoundTripper, error) {
	c, ok, err := b.resolve(ctx, conn)
	switch {
	case err != nil:
		return nil, err
	case !ok && conn.IsOAuth():
		return &gate{base: base, conn: conn, binder: b}, nil
	case !ok:
		return base, nil
	}
	if err := supports(conn, c); err != nil {
		return nil, err
	}
	u, err := url.Parse(conn.Transport.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("connection %q: http transport needs an http(s) url", conn.ID)
	}
	rt := &roundTripper{base: base, conn: conn.ID, authID: c.ID, scheme: c.Scheme, origin: u, secrets: c.secrets()}
	switch c.Scheme {
	case SchemeBearer:
		rt.headers = map[string]string{"Authorization": "Bearer " + c.bearer}
	case SchemeHeaders:
		rt.headers = maps.Clone(c.headers)
	case SchemeOAuthRefreshToken:
		rt.tokens = b.tokenSource(c)
	case SchemeOAuth:
		if !c.login.loggedIn(c.oauth) {
			return nil, needsLogin(conn, c)
		}
		rt.tokens = b.tokenSource(c)
		if why := rt.tokens.deadWhy(); why != "" {
			return nil, &LoginError{Connection: conn.ID, Host: c.login.host(), Why: why}
		}
	}
	return rt, nil
}

// Env returns the variables conn's auth record adds to a stdio server's
// environment (nil when it has none); they win over the transport's own.
func (b *Binder) Env(ctx context.Context, conn config.Connection) (map[string]string, error) {
	c, ok, err := b.resolve(ctx, conn)
	if err != nil || !ok {
		return nil, err
	}
	if err := supports(conn, c); err != nil {
		return nil, err
	}
	return maps.Clone(c.env), nil
}

// tokenSource returns the cached token source of c's record, or a new one
// when there is none or the record changed since.
func (b *Binder) tokenSource(c Credential) *tokenSource {
	fp := fingerprintOf(c)
	b.mu.Lock()
	defer b.mu.Unlock()
	if t, ok := b.tokens[c.ID]; ok && t.fingerprintIs(fp) {
		return t
	}
	t := newTokenSource(c.ID, *c.oauth, fp, b.client(), b.now)
	t.store = b.persister(c)
	if c.login != nil {
		t.final, t.host = true, c.login.host()
		t.seed(c.login.access, c.login.expiry)
	}
	b.tokens[c.ID] = t
	return t
}

// fingerprintOf identifies the token source c's record needs: for an
// oauth record, its client and its login (not the tokens a refresh
// rotates); for an oauth_refresh_token record, all of it.
func fingerprintOf(c Credential) [32]byte {
	if c.login != nil {
		o := *c.oauth
		o.refreshToken = c.login.loginID
		return fingerprint(&o)
	}
	return fingerprint(c.oauth)
}

func (b *Binder) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// client is the token endpoint client: Client (or a 30 s default) that
// follows no redirect.
func (b *Binder) client() *http.Client {
	c := &http.Client{Timeout: 30 * time.Second}
	if b.Client != nil {
		copied := *b.Client
		c = &copied
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// fingerprint identifies an oauth configuration without keeping it.
func fingerprint(o *oauthConfig) [32]byte {
	return sha256.Sum256([]byte(strings.Join(append([]string{o.clientID, o.clientSecret, o.refreshToken, o.tokenURL}, o.scopes...), "\x00")))
}
