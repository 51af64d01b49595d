package credentials

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// refreshMargin is how long before its expiry an access token is
	// refreshed (at most half its lifetime).
	refreshMargin = 60 * time.Second
	// retryRefresh is how long after a failed refresh the next one may be
	// tried, so a down token endpoint is not asked at every request.
	retryRefresh = 5 * time.Second
)

// tokenSource keeps the access token of one oauth_refresh_token record in
// memory. Refreshes are serialized: concurrent requests that find the
// token due wait for one refresh.
type tokenSource struct {
	id     string
	cfg    oauthConfig
	client *http.Client
	now    func() time.Time
	lock   chan struct{} // held by the one refresh in progress
	// store writes refreshed tokens (and a lost login) to the record.
	store *persister
	// final (an oauth record): a refresh the authorization server
	// refuses for good (invalid_grant) ends the login; host is its
	// authorization host.
	final bool
	host  string

	mu           sync.Mutex
	refreshToken string    // the stored one, or the one the endpoint rotated to
	access       string    // "" until the first refresh
	previous     string    // the access token before, still redacted
	expiry       time.Time // zero: unknown (used until a 401)
	refreshAt    time.Time // zero: never due
	gen          uint64    // increments per refresh
	retried      bool      // access came from a refresh after a 401 and no request has succeeded with it
	failedAt     time.Time // last failed refresh
	lastErr      error
	fingerprint  [32]byte // of the record this source serves; a rotation saved keeps it current
	dead         string   // why the login ended (final only); "" while it lasts
}

func newTokenSource(id string, cfg oauthConfig, fp [32]byte, client *http.Client, now func() time.Time) *tokenSource {
	return &tokenSource{id: id, cfg: cfg, fingerprint: fp, client: client, now: now, lock: make(chan struct{}, 1), refreshToken: cfg.refreshToken}
}

// seed starts the source with the access token a login stored, due a
// margin before its expiry (when known).
func (t *tokenSource) seed(access string, expiry time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if access == "" {
		return
	}
	t.access, t.expiry, t.gen = access, expiry, 1
	if !expiry.IsZero() {
		t.refreshAt = expiry.Add(-min(refreshMargin, max(expiry.Sub(t.now()), 0)/2))
	}
}

// fingerprintIs reports whether the source serves the record with
// fingerprint fp.
func (t *tokenSource) fingerprintIs(fp [32]byte) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fingerprint == fp
}

// deadWhy says why the login ended; "" while it lasts.
func (t *tokenSource) deadWhy() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dead
}

// current returns the access token if there is one that is not yet due.
func (t *tokenSource) current() (string, uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.access != "" && (t.refreshAt.IsZero() || t.now().Before(t.refreshAt)) {
		return t.access, t.gen, true
	}
	return "", 0, false
}

// token returns the access token to send, refreshing it first when there
// is none yet or it is due (before it expires).
func (t *tokenSource) token(ctx context.Context) (string, uint64, error) {
	if tok, gen, ok := t.current(); ok {
		return tok, gen, nil
	}
	if err := t.acquire(ctx); err != nil {
		return "", 0, err
	}
	defer t.release()
	if tok, gen, ok := t.current(); ok { // refreshed while this request waited
		return tok, gen, nil
	}
	t.mu.Lock()
	recent := !t.failedAt.IsZero() && t.now().Before(t.failedAt.Add(retryRefresh))
	usable := t.access != "" && (t.expiry.IsZero() || t.now().Before(t.expiry))
	tok, gen, lastErr := t.access, t.gen, t.lastErr
	reason := "due"
	if t.access == "" {
		reason = "first use"
	}
	t.mu.Unlock()
	if recent { // do not ask a failing endpoint again at once
		if usable {
			return tok, gen, nil
		}
		return "", 0, lastErr
	}
	if err := t.refresh(ctx, reason); err != nil {
		if usable && !errors.Is(err, ErrNeedsLogin) { // still valid: use it until it expires
			return tok, gen, nil
		}
		return "", 0, err
	}
	tok, gen, _ = t.current()
	return tok, gen, nil
}

// rejected handles a 401 to a request sent with the token of generation
// gen. It returns the token to retry with: a newer one if another request
// refreshed meanwhile, else a fresh one, unless the token was itself
// refreshed after a 401 and never accepted since (retry false: no loop).
func (t *tokenSource) rejected(ctx context.Context, gen uint64) (string, uint64, bool, error) {
	if err := t.acquire(ctx); err != nil {
		return "", 0, false, err
	}
	defer t.release()
	t.mu.Lock()
	newer, rejected := t.gen != gen && t.access != "", t.retried
	tok, cur, lastErr := t.access, t.gen, t.lastErr
	recent := !t.failedAt.IsZero() && t.now().Before(t.failedAt.Add(retryRefresh))
	t.mu.Unlock()
	switch {
	case newer:
		return tok, cur, true, nil
	case recent:
		return "", 0, false, lastErr
	case rejected:
		slog.Warn("oauth access token rejected again after a refresh; not refreshing until it succeeds or expires", "auth", t.id)
		return "", 0, false, nil
	}
	if err := t.refresh(ctx, "rejected with 401"); err != nil {
		return "", 0, false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.retried = true
	return t.access, t.gen, true, nil
}

// accepted notes that a request with the token of generation gen
// succeeded (was not rejected with 401).
func (t *tokenSource) accepted(gen uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gen == gen {
		t.retried = false
	}
}

// secrets are the values of this source never to show.
func (t *tokenSource) secrets() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return []string{t.access, t.previous, t.refreshToken, t.cfg.refreshToken, t.cfg.clientSecret}
}

func (t *tokenSource) acquire(ctx context.Context) error {
	select {
	case t.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("auth record %q (oauth_refresh_token): waiting for a token refresh: %w", t.id, ctx.Err())
	}
}

func (t *tokenSource) release() { <-t.lock }

// tokenResponse is a token endpoint's answer (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken  string          `json:"access_token"`
	ExpiresIn    json.RawMessage `json:"expires_in"`
	RefreshToken string          `json:"refresh_token"`
}

// errorCode is an OAuth error code safe to quote (RFC 6749 §5.2 codes are
// ASCII words).
var errorCode = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// refresh asks the token endpoint for a new access token (grant_type
// refresh_token). The caller holds lock.
func (t *tokenSource) refresh(ctx context.Context, reason string) error {
	t.mu.Lock()
	rt, dead := t.refreshToken, t.dead
	t.mu.Unlock()
	if dead != "" {
		return fmt.Errorf("auth record %q: %w: %s", t.id, ErrNeedsLogin, dead)
	}
	if rt == "" && t.final {
		return t.end("the access token expired and the login gave no refresh token")
	}
	started := t.now()
	res, code, err := t.post(ctx, rt)
	if err != nil && t.final && refusedForGood(code) {
		slog.Warn("oauth token refresh refused for good; the source needs a login", "auth", t.id, "reason", reason, "err", err)
		return t.end(fmt.Sprintf("the authorization server refused the refresh token (%s)", code))
	}
	t.mu.Lock()
	if err != nil {
		t.failedAt, t.lastErr = t.now(), err
		t.mu.Unlock()
		slog.Warn("oauth token refresh failed", "auth", t.id, "reason", reason, "err", err)
		return err
	}
	defer t.persist(res)
	defer t.mu.Unlock()
	t.previous, t.access = t.access, res.AccessToken
	t.gen++
	t.retried = false
	t.failedAt, t.lastErr = time.Time{}, nil
	if res.RefreshToken != "" {
		t.refreshToken = res.RefreshToken
	}
	t.expiry, t.refreshAt = time.Time{}, time.Time{}
	lifetime := expiresIn(res.ExpiresIn)
	if lifetime > 0 {
		t.expiry = started.Add(lifetime)
		t.refreshAt = t.expiry.Add(-min(refreshMargin, lifetime/2))
	}
	slog.Info("oauth access token refreshed", "auth", t.id, "reason", reason, "expires_in", lifetime, "rotated", res.RefreshToken != "" && res.RefreshToken != rt)
	return nil
}

// persist saves what a refresh returned in the record, and keeps the
// source's fingerprint that of the record saved (an oauth_refresh_token
// record's fingerprint holds its refresh token), so the next session
// keeps this source instead of refreshing again.
func (t *tokenSource) persist(res tokenResponse) {
	t.mu.Lock()
	rotated := res.RefreshToken != "" && res.RefreshToken != t.cfg.refreshToken
	expiry := t.expiry
	if rotated && !t.final {
		cfg := t.cfg
		cfg.refreshToken = res.RefreshToken
		t.fingerprint = fingerprint(&cfg)
	}
	if rotated {
		t.cfg.refreshToken = res.RefreshToken
	}
	t.mu.Unlock()
	refresh := ""
	if rotated {
		refresh = res.RefreshToken
	}
	t.store.refreshed(res.AccessToken, refresh, expiry)
}

// end ends the login of an oauth record for why: its tokens are dropped
// from the record, and every request fails with ErrNeedsLogin.
func (t *tokenSource) end(why string) error {
	t.mu.Lock()
	t.dead, t.access = why, ""
	t.mu.Unlock()
	t.store.loginLost(why)
	return fmt.Errorf("auth record %q: %w: %s", t.id, ErrNeedsLogin, why)
}

// scheme is the scheme of the record the source serves.
func (t *tokenSource) scheme() string {
	if t.final {
		return SchemeOAuth
	}
	return SchemeOAuthRefreshToken
}

// refusedForGood reports whether a token endpoint's error code means the
// refresh token will never work again (RFC 6749 §5.2).
func refusedForGood(code string) bool {
	return code == "invalid_grant" || code == "invalid_client" || code == "unauthorized_client"
}

// post sends the refresh request and reads the answer. Its errors name the
// auth id and the HTTP status, never a token, secret or the endpoint's
// free text.
func (t *tokenSource) post(ctx context.Context, refreshToken string) (tokenResponse, string, error) {
	code := ""
	fail := func(format string, args ...any) (tokenResponse, string, error) {
		return tokenResponse{}, code, fmt.Errorf("auth record %q (%s): "+format, append([]any{t.id, t.scheme()}, args...)...)
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}, "client_id": {t.cfg.clientID}}
	if t.cfg.clientSecret != "" {
		form.Set("client_secret", t.cfg.clientSecret)
	}
	if len(t.cfg.scopes) > 0 {
		form.Set("scope", strings.Join(t.cfg.scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.cfg.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return fail("token_url: %v", redactErr(err, t.cfg.clientSecret, refreshToken))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the url is not worth repeating
		}
		return fail("token endpoint unreachable: %w", redactErr(err, t.cfg.clientSecret, refreshToken))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return fail("read token endpoint answer: %w", redactErr(err, t.cfg.clientSecret, refreshToken))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && errorCode.MatchString(e.Error) &&
			NewRedactor(t.cfg.clientSecret, refreshToken).Redact(e.Error) == e.Error {
			code = e.Error
			return fail("token endpoint answered %d (%s)", resp.StatusCode, e.Error)
		}
		return fail("token endpoint answered %d", resp.StatusCode)
	}
	var res tokenResponse
	if err := json.Unmarshal(body, &res); err != nil {
		return fail("token endpoint answer is not a JSON token response")
	}
	if res.AccessToken == "" || !validHeaderValue(res.AccessToken) {
		return fail("token endpoint answered no usable access_token")
	}
	return res, "", nil
}

// expiresIn reads expires_in, a number of seconds (some endpoints send it
// as a string); 0 when absent or not positive.
func expiresIn(raw json.RawMessage) time.Duration {
	s := strings.Trim(string(raw), `"`)
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n * float64(time.Second))
}
