package fakes

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OAuthOptions configure an OAuthServer.
type OAuthOptions struct {
	// AccessTTL is the lifetime of the access tokens the token endpoint
	// mints (sent as expires_in); 0 is an hour.
	AccessTTL time.Duration
	// Scopes are the scopes the resource and the authorization server
	// name in their metadata.
	Scopes []string
}

// OAuthServer is an MCP server protected as the MCP authorization spec
// says, and its authorization server, on two loopback origins:
//
//   - the resource (RS) serves the MCP endpoint URL, answering 401 with a
//     WWW-Authenticate challenge that names its protected resource
//     metadata (RFC 9728) to any request without a live access token;
//   - the authorization server (AS) serves its metadata (RFC 8414),
//     dynamic client registration (RFC 7591), an authorization endpoint
//     that approves at once (the user's consent) and redirects with a
//     code, a token endpoint for the authorization_code grant with PKCE
//     S256 and for refresh_token grants that rotate the refresh token, and
//     revocation (RFC 7009).
//
// Close it when done.
type OAuthServer struct {
	RS, AS *httptest.Server
	// URL is the MCP endpoint; Issuer the authorization server's.
	URL, Issuer string

	opts OAuthOptions
	mu   sync.Mutex
	// clients are the registered clients: their redirect URIs.
	clients map[string][]string
	codes   map[string]grant
	access  map[string]time.Time // live access tokens: their expiry
	refresh map[string]string    // live refresh tokens: their client
	minted  []string             // every token issued
	// counters
	registrations, logins, refreshes int
	redirectTo                       string
}

// grant is an authorization code waiting for its exchange.
type grant struct {
	client, redirect, challenge string
}

// NewOAuthServer starts an OAuthServer on two 127.0.0.1 ports.
func NewOAuthServer(opts OAuthOptions) *OAuthServer {
	if opts.AccessTTL == 0 {
		opts.AccessTTL = time.Hour
	}
	s := &OAuthServer{opts: opts, clients: map[string][]string{}, codes: map[string]grant{}, access: map[string]time.Time{}, refresh: map[string]string{}}
	as := http.NewServeMux()
	as.HandleFunc("GET /.well-known/oauth-authorization-server", s.asMetadata)
	as.HandleFunc("POST /register", s.register)
	as.HandleFunc("GET /authorize", s.authorize)
	as.HandleFunc("POST /token", s.token)
	as.HandleFunc("POST /revoke", s.revoke)
	s.AS = httptest.NewServer(as)
	s.Issuer = s.AS.URL
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return NewServer() }, nil)
	rs := http.NewServeMux()
	rs.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.resourceMetadata)
	rs.Handle("/mcp", s.guard(mcpHandler))
	s.RS = httptest.NewServer(rs)
	s.URL = s.RS.URL + "/mcp"
	return s
}

// Close stops both servers.
func (s *OAuthServer) Close() {
	s.RS.Close()
	s.AS.Close()
}

// Registrations is how many clients registered; Logins how many
// authorization codes were exchanged (each with a verified PKCE
// verifier); Refreshes how many refresh grants were answered with tokens.
func (s *OAuthServer) Registrations() int { return s.count(&s.registrations) }

// Logins: see Registrations.
func (s *OAuthServer) Logins() int { return s.count(&s.logins) }

// Refreshes: see Registrations.
func (s *OAuthServer) Refreshes() int { return s.count(&s.refreshes) }

func (s *OAuthServer) count(n *int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *n
}

// Minted are every access and refresh token issued, in order.
func (s *OAuthServer) Minted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.minted)
}

// LiveRefreshTokens are the refresh tokens that would be honoured now.
func (s *OAuthServer) LiveRefreshTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for tok := range s.refresh {
		out = append(out, tok)
	}
	slices.Sort(out)
	return out
}

// ExpireAccessTokens makes every access token issued so far expired, as
// their lifetime passing would.
func (s *OAuthServer) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// RevokeRefreshTokens revokes every refresh token issued so far, as a
// user who withdrew the grant would.
func (s *OAuthServer) RevokeRefreshTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.refresh)
}

// RedirectTo makes the MCP endpoint answer every request with a 307 to
// target ("" stops it).
func (s *OAuthServer) RedirectTo(target string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redirectTo = target
}

func (s *OAuthServer) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"resource": s.URL, "authorization_servers": []string{s.Issuer},
		"scopes_supported": s.opts.Scopes, "bearer_methods_supported": []string{"header"}})
}

func (s *OAuthServer) asMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": s.Issuer, "authorization_endpoint": s.Issuer + "/authorize", "token_endpoint": s.Issuer + "/token",
		"registration_endpoint": s.Issuer + "/register", "revocation_endpoint": s.Issuer + "/revoke",
		"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
		"scopes_supported": s.opts.Scopes, "authorization_response_iss_parameter_supported": true,
	})
}

// guard passes requests with a live access token to next, and answers
// others 401 with the challenge that names the resource's metadata.
func (s *OAuthServer) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		target := s.redirectTo
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		expiry, ok := s.access[tok]
		live := ok && time.Now().Before(expiry)
		s.mu.Unlock()
		switch {
		case target != "":
			http.Redirect(w, r, target, http.StatusTemporaryRedirect)
		case live:
			next.ServeHTTP(w, r)
		default:
			challenge := `Bearer error="invalid_token", resource_metadata="` + s.RS.URL + `/.well-known/oauth-protected-resource/mcp"`
			if len(s.opts.Scopes) > 0 {
				challenge += `, scope="` + strings.Join(s.opts.Scopes, " ") + `"`
			}
			w.Header().Set("WWW-Authenticate", challenge)
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_token"})
		}
	})
}

func (s *OAuthServer) register(w http.ResponseWriter, r *http.Request) {
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_redirect_uri"})
		return
	}
	if meta.AuthMethod != "" && meta.AuthMethod != "none" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_client_metadata"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := "client-" + rand.Text()
	s.clients[id] = meta.RedirectURIs
	s.registrations++
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": meta.RedirectURIs, "token_endpoint_auth_method": "none"})
}

// redirectAllowed reports whether uri is one of registered, a loopback
// redirect matching in all but its port (RFC 8252 §7.3).
func redirectAllowed(registered []string, uri string) bool {
	u, err := url.Parse(uri)
	if err != nil {
		return false
	}
	for _, r := range registered {
		ru, err := url.Parse(r)
		if err != nil {
			continue
		}
		if r == uri || (ru.Hostname() == "127.0.0.1" && u.Hostname() == "127.0.0.1" && ru.Scheme == u.Scheme && ru.Path == u.Path) {
			return true
		}
	}
	return false
}

// authorize approves at once: it redirects to the client's redirect URI
// with a code bound to the PKCE challenge, the state and the issuer.
func (s *OAuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	redirects, known := s.clients[q.Get("client_id")]
	switch {
	case !known || !redirectAllowed(redirects, q.Get("redirect_uri")):
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") != s.URL:
		http.Error(w, "needs response_type code, a PKCE S256 challenge and the resource", http.StatusBadRequest)
		return
	}
	code := "code-" + rand.Text()
	s.codes[code] = grant{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge")}
	back, _ := url.Parse(q.Get("redirect_uri"))
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	v.Set("iss", s.Issuer)
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (s *OAuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	client := f.Get("client_id")
	switch f.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code")) // one use
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || g.client != client || g.redirect != f.Get("redirect_uri") || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
			return
		}
		s.logins++
	case "refresh_token":
		if owner, ok := s.refresh[f.Get("refresh_token")]; !ok || owner != client {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
			return
		}
		delete(s.refresh, f.Get("refresh_token")) // rotated
		s.refreshes++
	default:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type"})
		return
	}
	access, refresh := "at-"+rand.Text(), "rt-"+rand.Text()
	s.access[access] = time.Now().Add(s.opts.AccessTTL)
	s.refresh[refresh] = client
	s.minted = append(s.minted, access, refresh)
	writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer", "refresh_token": refresh,
		"expires_in": int(s.opts.AccessTTL.Seconds()), "scope": strings.Join(s.opts.Scopes, " ")})
}

// revoke drops a token (RFC 7009: unknown tokens are no error).
func (s *OAuthServer) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.refresh, r.PostForm.Get("token"))
	delete(s.access, r.PostForm.Get("token"))
	w.WriteHeader(http.StatusOK)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
