package fakes

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AuthOptions configure an AuthServer.
type AuthOptions struct {
	// Tokens are the access tokens accepted from the start: a static
	// bearer credential.
	Tokens []string
	// Header, when set, is the header that must carry an accepted token
	// (its whole value), instead of "Authorization: Bearer <token>".
	Header string
	// Query, when set, are URL query parameters every MCP request must
	// carry too, with these values (an API key in the URL); a request
	// without them is refused as one without an accepted token.
	Query map[string]string
	// The OAuth client the token endpoint knows: a refresh_token grant
	// with these values mints a new accepted access token. ClientSecret ""
	// is a public client (none expected).
	ClientID, ClientSecret, RefreshToken string
	// ExpiresIn is the expires_in of minted tokens, in seconds (0: not
	// sent).
	ExpiresIn int
	// Rotate makes every refresh grant answer a new refresh token, and
	// the one it used stop working (refresh token rotation).
	Rotate bool
	// Echo makes every refusal quote the credential it refused, as a
	// careless server would: 401s in a JSON-RPC error the MCP client
	// reports, token endpoint errors in error_description.
	Echo bool
}

// AuthServer is a streamable HTTP MCP server (NewServer's tools, a fresh
// server per session) at URL that answers 401 to any request without an
// accepted token (and the Query it must carry), and an OAuth token endpoint at TokenURL. Close it when
// done.
type AuthServer struct {
	*httptest.Server
	// URL is the MCP endpoint; TokenURL the token endpoint.
	URL, TokenURL string

	opts       AuthOptions
	mu         sync.Mutex
	accepted   map[string]bool
	minted     []string
	refreshes  int
	rejections int
	lastGrant  url.Values
}

// NewAuthServer starts an AuthServer on a 127.0.0.1 port.
func NewAuthServer(opts AuthOptions) *AuthServer {
	s := &AuthServer{opts: opts, accepted: map[string]bool{}}
	for _, t := range opts.Tokens {
		s.accepted[t] = true
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return NewServer() }, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", s.token)
	mux.Handle("/mcp", s.guard(mcpHandler))
	s.Server = httptest.NewServer(mux)
	s.URL, s.TokenURL = s.Server.URL+"/mcp", s.Server.URL+"/token"
	return s
}

// Revoke stops accepting every token accepted so far, as an upstream that
// revoked its tokens early would.
func (s *AuthServer) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.accepted)
}

// Refreshes is how many refresh grants the token endpoint answered with a
// token.
func (s *AuthServer) Refreshes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshes
}

// Rejections is how many MCP requests were refused with 401.
func (s *AuthServer) Rejections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rejections
}

// Minted are the access tokens (and, with Rotate, refresh tokens) the
// token endpoint issued, in order.
func (s *AuthServer) Minted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.minted)
}

// LastGrant is the form of the last request to the token endpoint.
func (s *AuthServer) LastGrant() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastGrant
}

// presented is the credential r carries, or "".
func (s *AuthServer) presented(r *http.Request) string {
	if s.opts.Header != "" {
		return r.Header.Get(s.opts.Header)
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return tok
}

// queried reports whether r's URL carries every parameter of Query.
func (s *AuthServer) queried(r *http.Request) bool {
	q := r.URL.Query()
	for k, v := range s.opts.Query {
		if q.Get(k) != v {
			return false
		}
	}
	return true
}

// guard answers 401 unless r carries an accepted token.
func (s *AuthServer) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := s.presented(r)
		s.mu.Lock()
		ok := tok != "" && s.accepted[tok] && s.queried(r)
		if !ok {
			s.rejections++
		}
		s.mu.Unlock()
		if ok {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		msg := "unauthorized"
		if s.opts.Echo {
			msg = fmt.Sprintf("invalid token %q", tok)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": requestID(r), "error": map[string]any{"code": -32001, "message": msg}})
	})
}

// requestID is the JSON-RPC id of r's body, or null.
func requestID(r *http.Request) any {
	var msg struct {
		ID any `json:"id"`
	}
	if r.Body != nil {
		data, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		_ = json.Unmarshal(data, &msg)
	}
	return msg.ID
}

// token answers a refresh_token grant with a new access token.
func (s *AuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastGrant = r.PostForm
	f := r.PostForm
	w.Header().Set("Content-Type", "application/json")
	if f.Get("grant_type") != "refresh_token" || f.Get("client_id") != s.opts.ClientID ||
		f.Get("client_secret") != s.opts.ClientSecret || f.Get("refresh_token") != s.opts.RefreshToken || s.opts.RefreshToken == "" {
		w.WriteHeader(http.StatusBadRequest)
		res := map[string]any{"error": "invalid_grant"}
		if s.opts.Echo {
			res["error_description"] = fmt.Sprintf("refresh token %q of client %q (secret %q) is not valid", f.Get("refresh_token"), f.Get("client_id"), f.Get("client_secret"))
		}
		_ = json.NewEncoder(w).Encode(res)
		return
	}
	tok := fmt.Sprintf("access-%d-%s", len(s.minted)+1, rand.Text())
	s.minted = append(s.minted, tok)
	s.accepted[tok] = true
	s.refreshes++
	res := map[string]any{"access_token": tok, "token_type": "Bearer"}
	if s.opts.Rotate {
		s.opts.RefreshToken = "refresh-" + rand.Text()
		s.minted = append(s.minted, s.opts.RefreshToken)
		res["refresh_token"] = s.opts.RefreshToken
	}
	if s.opts.ExpiresIn > 0 {
		res["expires_in"] = s.opts.ExpiresIn
	}
	_ = json.NewEncoder(w).Encode(res)
}
