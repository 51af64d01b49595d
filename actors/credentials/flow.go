package credentials

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"golang.org/x/oauth2"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
)

// ErrLogin: a login step failed (the source is no oauth source, the
// redirect is not a loopback one, the code exchange was refused).
var ErrLogin = errors.New("oauth login failed")

// LoginStart is where a login sends the user: the authorization URL (for
// the user's browser only: it holds no secret, but a PKCE challenge and
// a state), its host, and the issuer the redirect must name.
type LoginStart struct {
	URL, Host, Issuer string
	// RedirectURI is the redirect the login must listen on (its port when
	// the source fixes one).
	RedirectURI string
}

// BeginLogin returns the authorization URL of conn's login with the
// client's PKCE S256 challenge and state, redirecting to redirectURI (a
// loopback URL the login listens on). A source whose client is not known
// yet is discovered first, as its session would on a 401.
func (b *Binder) BeginLogin(ctx context.Context, conn config.Connection, redirectURI, challenge, state string) (LoginStart, error) {
	c, err := b.oauthRecord(ctx, conn)
	if err != nil {
		return LoginStart{}, err
	}
	if err := loopbackRedirect(c.login.redirectURI, redirectURI); err != nil {
		return LoginStart{}, fmt.Errorf("connection %q: %w: %v", conn.ID, ErrLogin, err)
	}
	if challenge == "" || state == "" {
		return LoginStart{}, fmt.Errorf("connection %q: %w: a login needs a PKCE S256 code_challenge and a state", conn.ID, ErrLogin)
	}
	cfg := c.oauth2Config(redirectURI)
	u := cfg.AuthCodeURL(state, oauth2.SetAuthURLParam("code_challenge", challenge), oauth2.SetAuthURLParam("code_challenge_method", "S256"),
		oauth2.SetAuthURLParam("resource", c.login.resource))
	return LoginStart{URL: u, Host: c.login.host(), Issuer: c.login.issuer, RedirectURI: c.login.redirectURI}, nil
}

// CompleteLogin exchanges the code the redirect brought (with the PKCE
// verifier and the redirect it was sent to) for tokens at the token
// endpoint, and saves them in conn's oauth record. Its errors name the
// token endpoint's error code, never a token or its free text.
func (b *Binder) CompleteLogin(ctx context.Context, conn config.Connection, code, verifier, redirectURI string) error {
	c, err := b.oauthRecord(ctx, conn)
	if err != nil {
		return err
	}
	if err := loopbackRedirect(c.login.redirectURI, redirectURI); err != nil {
		return fmt.Errorf("connection %q: %w: %v", conn.ID, ErrLogin, err)
	}
	if code == "" || verifier == "" {
		return fmt.Errorf("connection %q: %w: a login needs the code and the PKCE code_verifier", conn.ID, ErrLogin)
	}
	cfg := c.oauth2Config(redirectURI)
	ctx = context.WithValue(ctx, oauth2.HTTPClient, b.client())
	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", c.login.resource))
	if err != nil {
		why := "the token endpoint is unreachable or answered no token"
		if re, ok := errors.AsType[*oauth2.RetrieveError](err); ok {
			why = fmt.Sprintf("the token endpoint answered %d", re.Response.StatusCode)
			if errorCode.MatchString(re.ErrorCode) {
				why += " (" + re.ErrorCode + ")"
			}
		}
		return fmt.Errorf("connection %q: %w: %s", conn.ID, ErrLogin, why)
	}
	if tok.AccessToken == "" || !validHeaderValue(tok.AccessToken) {
		return fmt.Errorf("connection %q: %w: the token endpoint answered no usable access_token", conn.ID, ErrLogin)
	}
	rec, err := b.Records.GetAuth(ctx, c.ID)
	if err != nil {
		return fmt.Errorf("connection %q: read auth record %q: %w", conn.ID, c.ID, err)
	}
	if err := b.Records.SaveAuth(ctx, withTokens(rec, tok.AccessToken, tok.RefreshToken, tok.Expiry, true)); err != nil {
		return fmt.Errorf("connection %q: save auth record %q: %w", conn.ID, c.ID, err)
	}
	slog.Info("oauth login complete", "connection", conn.ID, "auth", c.ID, "authorization_host", c.login.host(), "refresh_token", tok.RefreshToken != "")
	return nil
}

// oauthRecord is conn's oauth record, discovered first when it has none.
func (b *Binder) oauthRecord(ctx context.Context, conn config.Connection) (Credential, error) {
	if !conn.IsOAuth() {
		return Credential{}, fmt.Errorf("connection %q: %w: its source has no auth {\"kind\": \"oauth\"}", conn.ID, ErrLogin)
	}
	if b.Records == nil {
		return Credential{}, fmt.Errorf("connection %q: %w: no store to keep the login in", conn.ID, ErrLogin)
	}
	c, ok, err := b.resolve(ctx, conn)
	if err != nil {
		return Credential{}, err
	}
	if !ok {
		perr := b.probe(ctx, conn)
		if le, ok := errors.AsType[*LoginError](perr); !ok || le.DiscoveryFailed {
			return Credential{}, fmt.Errorf("connection %q: %w: %v", conn.ID, ErrLogin, perr)
		}
		if c, ok, err = b.resolve(ctx, conn); err != nil || !ok {
			return Credential{}, fmt.Errorf("connection %q: %w: discovery saved no auth record", conn.ID, ErrLogin)
		}
	}
	if c.Scheme != SchemeOAuth {
		id, _ := Ref(conn)
		return Credential{}, fmt.Errorf("connection %q: %w: auth record %q has scheme %q, not %q", conn.ID, ErrLogin, id, c.Scheme, SchemeOAuth)
	}
	return c, nil
}

// probe asks conn's URL without credentials, so that its 401 starts
// discovery (see gate).
func (b *Binder) probe(ctx context.Context, conn config.Connection) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, conn.Transport.URL, nil)
	if err != nil {
		return fmt.Errorf("url %s does not parse", config.ShowURL(conn.Transport.URL))
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	g := &gate{base: cmpTransport(b.client().Transport), conn: conn, binder: b}
	resp, err := g.RoundTrip(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return fmt.Errorf("%s is unreachable", config.ShowURL(conn.Transport.URL))
		}
		return err
	}
	discard(resp)
	return fmt.Errorf("%s answered %d, not 401 with a WWW-Authenticate challenge", config.ShowURL(conn.Transport.URL), resp.StatusCode)
}

// oauth2Config is c's client as golang.org/x/oauth2 takes it.
func (c Credential) oauth2Config(redirectURI string) *oauth2.Config {
	return &oauth2.Config{
		ClientID: c.oauth.clientID, ClientSecret: c.oauth.clientSecret, RedirectURL: redirectURI, Scopes: c.oauth.scopes,
		Endpoint: oauth2.Endpoint{AuthURL: c.login.authEndpoint, TokenURL: c.oauth.tokenURL, AuthStyle: oauth2.AuthStyleInParams},
	}
}

// LoginRecord reports whether rec is an oauth record and the host of its
// authorization server.
func LoginRecord(rec store.AuthRecord) (host string, ok bool) {
	if rec.Scheme != SchemeOAuth {
		return "", false
	}
	s, _ := rec.Payload["authorization_endpoint"].(string)
	return hostOf(s), true
}
