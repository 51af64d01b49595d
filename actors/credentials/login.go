package credentials

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
)

// SchemeOAuth is the scheme of the auth record of a source with auth kind
// "oauth": the client its session discovered and registered (or was
// configured with), and, once `mcpflow sources login` ran, its tokens.
// Its payload: client_id, client_secret?, issuer, authorization_endpoint,
// token_url, resource, redirect_uri, scopes?, and after a login
// refresh_token?, access_token, expires_at_epoch_ms?, login_id; a login
// that is needed again has login_error instead of tokens.
const SchemeOAuth = "oauth"

// ErrNeedsLogin: the connection's source needs `mcpflow sources login`.
// A *LoginError wraps it.
var ErrNeedsLogin = errors.New("needs_login")

// LoginError says that a connection needs a login, where (the
// authorization server's host), and why.
type LoginError struct {
	Connection string
	// Host is the host of the authorization URL; "" when discovery failed.
	Host string
	// Why is what made the login needed; never a secret.
	Why string
	// DiscoveryFailed: the authorization server could not be discovered
	// or the client registered (Why says which step).
	DiscoveryFailed bool
}

func (e *LoginError) Error() string {
	at := ""
	if e.Host != "" {
		at = " at " + e.Host
	}
	return fmt.Sprintf("connection %q: %s: %s; log in%s with `mcpflow sources login %s`", e.Connection, ErrNeedsLogin, e.Why, at, e.Connection)
}

func (e *LoginError) Unwrap() error { return ErrNeedsLogin }

// LoginHost is the authorization server's host (the session shows it in
// its status).
func (e *LoginError) LoginHost() string { return e.Host }

// loginConfig is the part of an oauth record's payload a login needs.
type loginConfig struct {
	issuer, authEndpoint, resource, redirectURI, loginID, loginError string
	access                                                           string
	expiry                                                           time.Time
}

// parseLogin reads an oauth record: the client as parseOAuth reads it
// (refresh_token optional) and the login fields.
func parseLogin(p payload) (*oauthConfig, *loginConfig, error) {
	str := func(key string) (string, error) {
		v, present := p.rec.Payload[key]
		s, ok := v.(string)
		if present && v != nil && !ok {
			return "", p.invalid(key + " is not a string")
		}
		return s, nil
	}
	l := &loginConfig{}
	o := &oauthConfig{}
	for key, to := range map[string]*string{
		"client_id": &o.clientID, "client_secret": &o.clientSecret, "refresh_token": &o.refreshToken, "token_url": &o.tokenURL,
		"issuer": &l.issuer, "authorization_endpoint": &l.authEndpoint, "resource": &l.resource, "redirect_uri": &l.redirectURI,
		"access_token": &l.access, "login_id": &l.loginID, "login_error": &l.loginError,
	} {
		s, err := str(key)
		if err != nil {
			return nil, nil, err
		}
		*to = s
	}
	for key, v := range map[string]string{"client_id": o.clientID, "token_url": o.tokenURL, "authorization_endpoint": l.authEndpoint, "redirect_uri": l.redirectURI} {
		if v == "" {
			return nil, nil, p.invalid("needs a non-empty string " + key)
		}
	}
	for key, v := range map[string]string{"token_url": o.tokenURL, "authorization_endpoint": l.authEndpoint} {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, nil, p.invalid(key + " is not an http(s) URL")
		}
	}
	if !validHeaderValue(l.access) {
		return nil, nil, p.invalid("access_token holds a control character")
	}
	switch ms := p.rec.Payload["expires_at_epoch_ms"].(type) {
	case nil:
	case float64:
		l.expiry = time.UnixMilli(int64(ms))
	case int64:
		l.expiry = time.UnixMilli(ms)
	case int:
		l.expiry = time.UnixMilli(int64(ms))
	default:
		return nil, nil, p.invalid("expires_at_epoch_ms is not a number")
	}
	scopes, err := parseScopes(p)
	if err != nil {
		return nil, nil, err
	}
	o.scopes = scopes
	return o, l, nil
}

// loggedIn reports whether the record holds tokens.
func (l *loginConfig) loggedIn(o *oauthConfig) bool { return o.refreshToken != "" || l.access != "" }

// host is the authorization endpoint's host.
func (l *loginConfig) host() string {
	u, err := url.Parse(l.authEndpoint)
	if err != nil {
		return ""
	}
	return u.Host
}

// needsLogin is the LoginError of conn whose oauth record c holds no
// tokens.
func needsLogin(conn config.Connection, c Credential) error {
	why := "no login yet"
	if c.login.loginError != "" {
		why = c.login.loginError
	}
	return &LoginError{Connection: conn.ID, Host: c.login.host(), Why: why}
}

// LoginNeeded is the *LoginError of conn when it logs in with OAuth and
// the store holds no login of it: conn has auth kind oauth and no auth
// record yet (its session has not met the server's 401), or its record is
// an oauth one without tokens (never logged in, or a login that is needed
// again); nil otherwise. rec is conn's auth record, nil when it has none.
// It reads the store only: a refresh refused for good is saved as a login
// needed again, so it shows here too.
func LoginNeeded(conn config.Connection, rec *store.AuthRecord) error {
	if rec == nil {
		if conn.IsOAuth() {
			return &LoginError{Connection: conn.ID, Why: "no login yet"}
		}
		return nil
	}
	c, err := Parse(*rec)
	if err != nil || c.Scheme != SchemeOAuth || c.login.loggedIn(c.oauth) {
		return nil // an invalid record is a finding of its own
	}
	return needsLogin(conn, c)
}

// LoginFields are the payload keys a login sets and a login that is
// needed again clears; the rest of an oauth record is its client.
var LoginFields = []string{"refresh_token", "access_token", "expires_at_epoch_ms", "login_id", "login_error"}

// Identity is rec without what changes while a login lasts (the tokens a
// refresh rotates), so that a digest of it changes at a login, a login
// that is needed again or a new client, and not at each refresh.
func Identity(rec store.AuthRecord) store.AuthRecord {
	if rec.Scheme != SchemeOAuth {
		return rec
	}
	out := rec
	out.Payload = map[string]any{}
	for k, v := range rec.Payload {
		switch k {
		case "refresh_token", "access_token", "expires_at_epoch_ms":
			out.Payload[k+"_present"] = v != nil && v != ""
		default:
			out.Payload[k] = v
		}
	}
	return out
}

// withTokens is rec (an oauth record) holding the tokens of a login.
func withTokens(rec store.AuthRecord, access, refresh string, expiry time.Time, newLogin bool) store.AuthRecord {
	out := rec
	out.Payload = clonePayload(rec.Payload)
	out.Payload["access_token"] = access
	if refresh != "" {
		out.Payload["refresh_token"] = refresh
	}
	delete(out.Payload, "expires_at_epoch_ms")
	if !expiry.IsZero() {
		out.Payload["expires_at_epoch_ms"] = expiry.UnixMilli()
	}
	delete(out.Payload, "login_error")
	if newLogin {
		out.Payload["login_id"] = rand.Text()
	}
	return out
}

// withoutLogin is rec (an oauth record) with its tokens dropped, for why.
func withoutLogin(rec store.AuthRecord, why string) store.AuthRecord {
	out := rec
	out.Payload = clonePayload(rec.Payload)
	for _, k := range LoginFields {
		delete(out.Payload, k)
	}
	out.Payload["login_error"] = why
	return out
}

func clonePayload(p map[string]any) map[string]any {
	out := make(map[string]any, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

// loopbackRedirect checks that uri is an http loopback redirect with the
// path of registered, and the port of registered when it names one.
func loopbackRedirect(registered, uri string) error {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "http" || (u.Hostname() != "127.0.0.1" && u.Hostname() != "::1") || u.Port() == "" {
		return errors.New("redirect_uri must be an http loopback URL with a port (http://127.0.0.1:PORT/callback)")
	}
	r, err := url.Parse(registered)
	if err != nil {
		return errors.New("the registered redirect_uri does not parse")
	}
	if r.Path != u.Path || (r.Port() != "" && r.Port() != u.Port()) {
		return fmt.Errorf("redirect_uri must be %s", strings.Replace(registered, r.Host, r.Hostname()+":"+cmpPort(r.Port()), 1))
	}
	return nil
}

func cmpPort(p string) string {
	if p == "" {
		return "PORT"
	}
	return p
}
