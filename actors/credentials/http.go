package credentials

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/mcpflow/mcpflow/actors/config"
)

// maxErrorBody bounds how much of an upstream error response is kept.
const maxErrorBody = 1 << 20

// roundTripper authorizes the requests of one connection: fixed headers
// (bearer, headers) or an oauth access token, set on every request to the
// connection's origin.
type roundTripper struct {
	loginHolder
	base           http.RoundTripper
	conn           string // the connection's id
	authID, scheme string
	origin         *url.URL          // credentials go to its origin only
	headers        map[string]string // set on every request
	tokens         *tokenSource      // oauth_refresh_token; nil otherwise
	secrets        []string          // never shown
}

// RoundTrip sends r with the connection's credentials. With an oauth
// token, a 401 refreshes the token at most once and, if r's body can be
// sent again, retries r once with the new token; a token that is rejected
// again is not refreshed again until one of its requests succeeds.
func (t *roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if !config.SameOrigin(r.URL, t.origin) {
		return t.base.RoundTrip(r) // another origin (a redirect) gets no credentials
	}
	if t.tokens == nil {
		resp, err := t.base.RoundTrip(t.authorized(r, ""))
		return t.scrub(resp, err)
	}
	tok, gen, err := t.tokens.token(r.Context())
	if err != nil {
		closeBody(r)
		return nil, t.loginLost(err)
	}
	resp, err := t.base.RoundTrip(t.authorized(r, tok))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		if err == nil {
			t.tokens.accepted(gen)
		}
		return t.scrub(resp, err, tok)
	}
	fresh, freshGen, retry, err := t.tokens.rejected(r.Context(), gen)
	if err != nil {
		discard(resp)
		return nil, t.loginLost(err)
	}
	if !retry || !replayable(r) {
		return t.scrub(resp, nil, tok)
	}
	again := r
	if r.Body != nil && r.Body != http.NoBody {
		body, err := r.GetBody()
		if err != nil {
			return t.scrub(resp, nil, tok)
		}
		again = r.Clone(r.Context())
		again.Body = body
	}
	discard(resp)
	slog.Info("oauth access token rejected with 401; retrying once with a refreshed token", "auth", t.authID)
	resp, err = t.base.RoundTrip(t.authorized(again, fresh))
	if err == nil && resp.StatusCode != http.StatusUnauthorized {
		t.tokens.accepted(freshGen)
	}
	return t.scrub(resp, err, fresh, tok)
}

// loginLost turns a token error that ends an oauth login into the
// connection's LoginError, and keeps it for the session (NeedsLogin).
func (t *roundTripper) loginLost(err error) error {
	if !errors.Is(err, ErrNeedsLogin) {
		return err
	}
	lerr := &LoginError{Connection: t.conn, Host: t.tokens.host, Why: t.tokens.deadWhy()}
	t.set(lerr)
	return lerr
}

// authorized is a copy of r with the credentials set (token, when not
// empty, as a bearer Authorization).
func (t *roundTripper) authorized(r *http.Request, token string) *http.Request {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

// scrub redacts every secret from a transport error and from the body of
// an error response, where a server may echo the credentials it rejected
// and the MCP client would quote them.
func (t *roundTripper) scrub(resp *http.Response, err error, tokens ...string) (*http.Response, error) {
	secrets := append(slices.Clone(t.secrets), tokens...)
	if t.tokens != nil {
		secrets = append(secrets, t.tokens.secrets()...)
	}
	if err != nil {
		return nil, redactErr(err, secrets...)
	}
	if resp.StatusCode < 400 || resp.Body == nil {
		return resp, nil
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	clean := []byte(NewRedactor(secrets...).Redact(string(data)))
	resp.Body = io.NopCloser(bytes.NewReader(clean))
	resp.ContentLength = int64(len(clean))
	resp.Header = resp.Header.Clone()
	if resp.Header != nil {
		resp.Header.Set("Content-Length", strconv.Itoa(len(clean)))
		resp.Header.Del("Www-Authenticate")
	}
	return resp, nil
}

// replayable reports whether r can be sent again: it has no body, or
// GetBody makes a fresh copy of it.
func replayable(r *http.Request) bool {
	return r.Body == nil || r.Body == http.NoBody || r.GetBody != nil
}

func closeBody(r *http.Request) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
}

// discard drains (a bounded amount) and closes resp's body, so its
// connection can be reused.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
}
