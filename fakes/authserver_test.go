package fakes_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/fakes"
)

// bearerTransport sets a fixed Authorization header.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// connectWith connects a go-sdk client to s with token.
func connectWith(t *testing.T, s *fakes.AuthServer, token string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "fakes-test", Version: "v0"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: s.URL, HTTPClient: &http.Client{Transport: bearerTransport(token)}, DisableStandaloneSSE: true,
	}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func TestAuthServerServesOnlyAcceptedTokens(t *testing.T) {
	is := is.New(t)
	s := fakes.NewAuthServer(fakes.AuthOptions{Tokens: []string{"good-token"}, Echo: true})
	t.Cleanup(s.Close)

	cs, err := connectWith(t, s, "good-token")
	is.NoErr(err) // an accepted token connects
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "counter", Arguments: map[string]any{}})
	is.NoErr(err)
	is.Equal(res.StructuredContent, map[string]any{"count": float64(1)})

	_, err = connectWith(t, s, "bad-token")
	is.True(err != nil)                                 // any other token is refused
	is.True(strings.Contains(err.Error(), "bad-token")) // with Echo, the refusal quotes it
	is.True(s.Rejections() >= 1)                        // and is counted
	s.Revoke()
	_, err = connectWith(t, s, "good-token")
	is.True(err != nil) // a revoked token is refused
}

func TestAuthServerMintsTokensForItsRefreshGrant(t *testing.T) {
	is := is.New(t)
	s := fakes.NewAuthServer(fakes.AuthOptions{ClientID: "app", ClientSecret: "shh", RefreshToken: "rt-1", ExpiresIn: 60})
	t.Cleanup(s.Close)
	grant := func(form url.Values) (int, map[string]any) {
		resp, err := http.PostForm(s.TokenURL, form)
		is.NoErr(err)
		defer resp.Body.Close()
		var body map[string]any
		is.NoErr(json.NewDecoder(resp.Body).Decode(&body))
		return resp.StatusCode, body
	}
	status, body := grant(url.Values{"grant_type": {"refresh_token"}, "client_id": {"app"}, "client_secret": {"shh"}, "refresh_token": {"rt-1"}})
	is.Equal(status, http.StatusOK)
	is.Equal(body["expires_in"], float64(60))
	is.Equal(s.Minted(), []string{body["access_token"].(string)})
	is.Equal(s.Refreshes(), 1)
	_, err := connectWith(t, s, body["access_token"].(string))
	is.NoErr(err) // a minted token is accepted

	status, body = grant(url.Values{"grant_type": {"refresh_token"}, "client_id": {"app"}, "client_secret": {"wrong"}, "refresh_token": {"rt-1"}})
	is.Equal(status, http.StatusBadRequest)
	is.Equal(body["error"], "invalid_grant")
	is.Equal(s.Refreshes(), 1)
	is.Equal(s.LastGrant().Get("client_secret"), "wrong")
}
