package credentials

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
)

// discoveryTimeout bounds the discovery and registration that follow a
// 401.
const discoveryTimeout = 30 * time.Second

// loginHolder keeps the LoginError a connection's requests met, for the
// session to read after its connect failed (go-sdk does not keep the
// transport's error in the chain it returns).
type loginHolder struct{ err atomic.Pointer[LoginError] }

func (h *loginHolder) set(err error) {
	if le, ok := errors.AsType[*LoginError](err); ok {
		h.err.CompareAndSwap(nil, le)
	}
}

// NeedsLogin is the LoginError the connection's requests met, or nil.
func (h *loginHolder) NeedsLogin() error {
	if le := h.err.Load(); le != nil {
		return le
	}
	return nil
}

// gate is the round tripper of an oauth source without a client yet: its
// requests go out without credentials, and a 401 with a WWW-Authenticate
// challenge makes it discover the authorization server, register a
// client, save the oauth record and fail with a LoginError.
type gate struct {
	loginHolder
	base   http.RoundTripper
	conn   config.Connection
	binder *Binder
}

func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := g.base.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || len(resp.Header.Values("Www-Authenticate")) == 0 {
		return resp, err
	}
	challenges := resp.Header.Values("Www-Authenticate")
	discard(resp)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), discoveryTimeout)
	defer cancel()
	lerr := g.binder.discoverOnce(ctx, g.conn, challenges)
	g.set(lerr)
	return nil, lerr
}

// discoverOnce runs discover unless a request before this one (of this
// session or another) already saved conn's oauth record: concurrent 401s
// register one client.
func (b *Binder) discoverOnce(ctx context.Context, conn config.Connection, challenges []string) error {
	b.discovering.Lock()
	defer b.discovering.Unlock()
	if c, ok, err := b.resolve(ctx, conn); err == nil && ok && c.Scheme == SchemeOAuth {
		return needsLogin(conn, c)
	}
	return b.discover(ctx, conn, challenges)
}

// discover follows the MCP authorization spec from a 401's challenges: it
// reads the protected resource metadata (RFC 9728) and the authorization
// server's (RFC 8414), registers a client (RFC 7591) unless the source
// names one, saves the oauth record and returns the LoginError that says
// where to log in. Its errors name hosts and steps, never a body.
func (b *Binder) discover(ctx context.Context, conn config.Connection, challenges []string) error {
	fail := func(host, format string, args ...any) error {
		why := fmt.Sprintf(format, args...)
		slog.Warn("oauth discovery failed", "connection", conn.ID, "why", why)
		return &LoginError{Connection: conn.ID, Host: host, Why: "discovery failed: " + why, DiscoveryFailed: true}
	}
	client := b.discoveryClient()
	parsed, err := oauthex.ParseWWWAuthenticate(challenges)
	if err != nil {
		return fail("", "the WWW-Authenticate challenge does not parse")
	}
	resource := conn.Transport.URL
	if i := strings.IndexAny(resource, "?#"); i >= 0 {
		resource = resource[:i] // a query may hold a secret; the resource is the endpoint
	}
	var challengeScopes []string
	metaURL := ""
	for _, c := range parsed {
		if u := c.Params["resource_metadata"]; u != "" && metaURL == "" {
			metaURL = u
		}
		if c.Scheme == "bearer" && c.Params["scope"] != "" && challengeScopes == nil {
			challengeScopes = strings.Fields(c.Params["scope"])
		}
	}
	if metaURL == "" {
		u, _ := url.Parse(resource)
		metaURL = u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/")
	}
	prm, err := oauthex.GetProtectedResourceMetadata(ctx, metaURL, resource, client)
	if err != nil || prm == nil || len(prm.AuthorizationServers) == 0 {
		return fail("", "no usable protected resource metadata at %s", config.ShowURL(metaURL))
	}
	issuer := prm.AuthorizationServers[0]
	issuerHost := hostOf(issuer)
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, client)
	if err != nil || asm == nil {
		return fail(issuerHost, "no usable authorization server metadata for %s", config.ShowURL(issuer))
	}
	host := hostOf(asm.AuthorizationEndpoint)
	if len(asm.CodeChallengeMethodsSupported) > 0 && !containsFold(asm.CodeChallengeMethodsSupported, "S256") {
		return fail(host, "the authorization server does not offer PKCE S256")
	}
	scopes := conn.Auth.Scopes
	if len(scopes) == 0 {
		scopes = challengeScopes
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	redirect := "http://127.0.0.1/callback"
	if conn.Auth.RedirectPort > 0 {
		redirect = "http://127.0.0.1:" + strconv.Itoa(conn.Auth.RedirectPort) + "/callback"
	}
	clientID, clientSecret := conn.Auth.ClientID, ""
	if clientID == "" {
		if asm.RegistrationEndpoint == "" {
			return fail(host, "the authorization server offers no dynamic client registration; configure auth.client_id")
		}
		reg, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none", GrantTypes: []string{"authorization_code", "refresh_token"},
			ResponseTypes: []string{"code"}, ClientName: "mcpflow", ApplicationType: "native", Scope: strings.Join(scopes, " "),
		}, client)
		if err != nil {
			code := ""
			if re, ok := errors.AsType[*oauthex.ClientRegistrationError](err); ok && errorCode.MatchString(re.ErrorCode) {
				code = " (" + re.ErrorCode + ")"
			}
			return fail(host, "dynamic client registration at %s refused%s", hostOf(asm.RegistrationEndpoint), code)
		}
		clientID, clientSecret = reg.ClientID, reg.ClientSecret
	}
	payload := map[string]any{
		"client_id": clientID, "issuer": asm.Issuer, "authorization_endpoint": asm.AuthorizationEndpoint, "token_url": asm.TokenEndpoint,
		"resource": resource, "redirect_uri": redirect, "scopes": scopes, "login_error": "no login yet",
	}
	if clientSecret != "" {
		payload["client_secret"] = clientSecret
	}
	if asm.RevocationEndpoint != "" {
		payload["revocation_endpoint"] = asm.RevocationEndpoint
	}
	id, _ := Ref(conn)
	rec := store.AuthRecord{ID: id, Scheme: SchemeOAuth, Payload: payload, Metadata: map[string]any{"connection": conn.ID, "authorization_host": host}}
	if b.Records == nil {
		return fail(host, "no store to keep the registered client in")
	}
	if err := b.Records.SaveAuth(ctx, rec); err != nil {
		return fail(host, "save auth record %q: %v", id, err)
	}
	slog.Info("oauth authorization server discovered; the source needs a login", "connection", conn.ID, "auth", id, "authorization_host", host, "registered", conn.Auth.ClientID == "")
	return &LoginError{Connection: conn.ID, Host: host, Why: "no login yet"}
}

// discoveryClient is the client of discovery and registration: it sends
// no credentials, follows no redirect to another scheme, and, being no
// *http.Transport, keeps go-sdk from refusing loopback and private
// addresses (an operator configured the source; see docs/decisions.md).
func (b *Binder) discoveryClient() *http.Client {
	c := b.client()
	c.Transport = plainTransport{base: cmpTransport(c.Transport)}
	return c
}

type plainTransport struct{ base http.RoundTripper }

func (t plainTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return t.base.RoundTrip(r)
}

func cmpTransport(t http.RoundTripper) http.RoundTripper {
	if t == nil {
		return http.DefaultTransport
	}
	return t
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}
