package integration

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
)

// Tokens of the access tests: one per scope set.
var (
	readToken  = config.Token{Name: "dashboard", Token: "read-" + strings.Repeat("r", 24), Scopes: []string{"read"}}
	runToken   = config.Token{Name: "ci", Token: "run-" + strings.Repeat("x", 24), Scopes: []string{"read", "run"}}
	adminToken = config.Token{Name: "ops", Token: "admin-" + strings.Repeat("a", 24), Scopes: []string{"admin"}}
)

// startGuarded starts mcpflow in-process with the access tokens above and
// one allowed browser origin.
func startGuarded(t *testing.T) *service {
	t.Helper()
	return startServiceTuned(t, func(opts *app.Options) {
		opts.Config.Server.Access = &config.Access{
			Tokens:         []config.Token{readToken, runToken, adminToken},
			AllowedOrigins: []string{"https://console.example"},
		}
	})
}

// rpcReply is one /rpc exchange: the HTTP status and the decoded reply
// (an object, or an array for a batch).
type rpcReply struct {
	status int
	header http.Header
	body   json.RawMessage
}

// post sends frame to /rpc of s with the given headers (Host among them,
// as "Host").
func post(t *testing.T, s *service, frame string, headers map[string]string) rpcReply {
	t.Helper()
	is := is.New(t)
	is.Helper()
	url := "http://" + strings.TrimSuffix(strings.TrimPrefix(s.URL, "ws://"), "/ws") + "/rpc"
	req, err := http.NewRequestWithContext(testContext(t), http.MethodPost, url, strings.NewReader(frame))
	is.NoErr(err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	is.NoErr(err)
	return rpcReply{status: resp.StatusCode, header: resp.Header, body: body}
}

// errorCode is the code of a single reply's error, 0 for a result.
func errorCode(t *testing.T, raw json.RawMessage) int {
	t.Helper()
	var r struct {
		Error *jsonrpc.Error `json:"error"`
	}
	is.New(t).NoErr(json.Unmarshal(raw, &r))
	if r.Error == nil {
		return 0
	}
	return r.Error.Code
}

func bearer(tok config.Token) map[string]string {
	return map[string]string{"Authorization": "Bearer " + tok.Token}
}

const healthFrame = `{"jsonrpc":"2.0","id":1,"method":"workflow.health"}`

func TestAccessWithoutAValidTokenNothingHappens(t *testing.T) {
	is := is.New(t)
	s := startGuarded(t)

	for name, headers := range map[string]map[string]string{
		"no token":    nil,
		"wrong token": {"Authorization": "Bearer not-a-configured-token-at-all"},
		"basic":       {"Authorization": "Basic dXNlcjpwYXNz"},
	} {
		r := post(t, s, healthFrame, headers)
		t.Logf("%s: %d %s", name, r.status, r.body)
		is.Equal(r.status, http.StatusUnauthorized)             // refused before anything runs
		is.Equal(errorCode(t, r.body), jsonrpc.Unauthenticated) // -32001
		is.True(strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer"))
		is.True(!strings.Contains(string(r.body), "not-a-configured")) // the token is never echoed

		_, err := client.DialToken(testContext(t), s.URL, strings.TrimPrefix(headers["Authorization"], "Bearer "))
		is.True(err != nil) // the upgrade is refused too
		var rpcErr *jsonrpc.Error
		is.True(errors.As(err, &rpcErr))
		is.Equal(rpcErr.Code, jsonrpc.Unauthenticated)
	}
	// Nothing happened: the admin token sees no run and no deployment.
	c := dialToken(t, s, adminToken)
	var runs struct{ Total int }
	is.NoErr(c.Call(testContext(t), "workflow.runs.list", nil, &runs))
	is.Equal(runs.Total, 0)
}

func TestAccessEachMethodNeedsItsScopeAndEachBatchEntryIsJudgedAlone(t *testing.T) {
	is := is.New(t)
	s := startGuarded(t)

	// A read token reads, and may neither run nor author nor administer.
	reader := dialToken(t, s, readToken)
	var health map[string]any
	is.NoErr(reader.Call(testContext(t), "workflow.health", nil, &health))
	for method, params := range map[string]any{
		"workflow.runs.start":                     map[string]any{"deployment_id": "d", "workflow_input": map[string]any{}},
		"workflow.deployments.save":               map[string]any{"deployment": map[string]any{"id": "d"}},
		"workflow.admin.connections.list":         nil,
		"workflow.admin.auth.list":                nil,
		"workflow.draft_workspaces.create_empty":  map[string]any{"workspace_id": "w", "name": "n"},
		"workflow.admin.source_registry.list":     nil,
		"workflow.admin.connection_statuses.list": nil,
	} {
		err := reader.Call(testContext(t), method, params, nil)
		var rpcErr *jsonrpc.Error
		is.True(errors.As(err, &rpcErr))
		is.Equal(rpcErr.Code, jsonrpc.Forbidden) // -32003
		is.True(strings.Contains(rpcErr.Error(), `token "dashboard"`))
	}

	// One batch, entries allowed and forbidden for the run token: each
	// gets its own answer, and the forbidden ones change nothing.
	batch := `[
		{"jsonrpc":"2.0","id":1,"method":"workflow.health"},
		{"jsonrpc":"2.0","id":2,"method":"workflow.deployments.save","params":{"deployment":{"id":"x.default","artifact_id":"a","artifact_version":1,"bindings":[]}}},
		{"jsonrpc":"2.0","id":3,"method":"workflow.runs.list"},
		{"jsonrpc":"2.0","id":4,"method":"workflow.admin.auth.list"}]`
	r := post(t, s, batch, bearer(runToken))
	is.Equal(r.status, http.StatusOK)
	var replies []json.RawMessage
	is.NoErr(json.Unmarshal(r.body, &replies))
	is.Equal(len(replies), 4)
	codes := map[string]int{}
	for _, raw := range replies {
		var id struct{ ID json.RawMessage }
		is.NoErr(json.Unmarshal(raw, &id))
		codes[string(id.ID)] = errorCode(t, raw)
	}
	is.Equal(codes, map[string]int{"1": 0, "2": jsonrpc.Forbidden, "3": 0, "4": jsonrpc.Forbidden})
	var deployments struct{ Deployments []any }
	is.NoErr(dialToken(t, s, adminToken).Call(testContext(t), "workflow.deployments.list", nil, &deployments))
	is.Equal(len(deployments.Deployments), 0) // the forbidden save did nothing
}

func TestAccessOriginAndHostAreCheckedApart(t *testing.T) {
	is := is.New(t)
	s := startGuarded(t)
	auth := bearer(adminToken)
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{"Authorization": auth["Authorization"]}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	for name, tc := range map[string]struct {
		headers map[string]string
		status  int
	}{
		"no origin (not a browser)": {with(nil), http.StatusOK},
		"a loopback page":           {with(map[string]string{"Origin": "http://localhost:5173"}), http.StatusOK},
		"an allowed origin":         {with(map[string]string{"Origin": "https://console.example"}), http.StatusOK},
		"a foreign origin":          {with(map[string]string{"Origin": "https://evil.example"}), http.StatusForbidden},
		// DNS rebinding: the page's own name in both Host and Origin.
		"a rebinding-shaped host":           {with(map[string]string{"Host": "evil.example:8765", "Origin": "http://evil.example:8765"}), http.StatusForbidden},
		"a rebinding host without origin":   {with(map[string]string{"Host": "evil.example"}), http.StatusForbidden},
		"a configured origin, foreign host": {with(map[string]string{"Host": "evil.example", "Origin": "https://console.example"}), http.StatusForbidden},
	} {
		r := post(t, s, healthFrame, tc.headers)
		t.Logf("%s: %d %s", name, r.status, r.body)
		is.Equal(r.status, tc.status) // the answer to name
		if tc.status == http.StatusForbidden {
			is.Equal(errorCode(t, r.body), jsonrpc.Forbidden)
		}
	}

	// The WebSocket upgrade applies the same checks.
	h := http.Header{"Authorization": {auth["Authorization"]}, "Origin": {"https://evil.example"}}
	ws, resp, err := websocket.DefaultDialer.Dial(s.URL, h)
	is.True(err != nil)
	is.True(ws == nil)
	is.Equal(resp.StatusCode, http.StatusForbidden)
	_ = resp.Body.Close()
}

func TestAccessABrowserSendsItsTokenAsASubprotocol(t *testing.T) {
	is := is.New(t)
	s := startGuarded(t)
	d := websocket.Dialer{Subprotocols: []string{access.Subprotocol, access.SubprotocolPrefix + runToken.Token}}
	ws, resp, err := d.Dial(s.URL, http.Header{"Origin": {"https://console.example"}})
	is.NoErr(err)
	defer ws.Close()
	is.Equal(resp.Header.Get("Sec-WebSocket-Protocol"), access.Subprotocol) // never the token
	is.NoErr(ws.WriteMessage(websocket.TextMessage, []byte(healthFrame)))
	is.NoErr(ws.SetReadDeadline(time.Now().Add(10 * time.Second)))
	_, data, err := ws.ReadMessage()
	is.NoErr(err)
	is.Equal(errorCode(t, data), 0)
}

func TestAccessANonLoopbackListenNeedsTokensOrInsecureNoAuth(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir)
	out, err := exec.Command(binary, "serve", "--config", cfg, "--listen", "0.0.0.0:0").CombinedOutput()
	t.Logf("%s", out)
	is.True(err != nil) // refused
	is.True(strings.Contains(string(out), "--insecure-no-auth"))
	_, statErr := os.Stat(filepath.Join(dir, "store"))
	is.True(os.IsNotExist(statErr)) // and nothing was opened

	// Loopback without tokens is served, and says so.
	p := startProcess(t, cfg, "loopback.log")
	code, _ := p.terminate(t)
	is.Equal(code, 0)
	logs, err := os.ReadFile(p.logs)
	is.NoErr(err)
	is.True(strings.Contains(string(logs), "serving loopback clients only"))
}

// dialToken connects a Go client with tok, closed at cleanup.
func dialToken(t *testing.T, s *service, tok config.Token) *client.Client {
	t.Helper()
	c, err := client.DialToken(testContext(t), s.URL, tok.Token)
	is.New(t).NoErr(err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestAccessEveryTokenLearnsWhoItIs checks workflow.access.whoami: any
// valid token may ask, and hears its own name and scopes.
func TestAccessEveryTokenLearnsWhoItIs(t *testing.T) {
	is := is.New(t)
	s := startGuarded(t)
	for _, tc := range []struct {
		tok    config.Token
		scopes []string
	}{
		{readToken, []string{"read"}},
		{runToken, []string{"read", "run"}},
		{adminToken, []string{"read", "run", "author", "admin"}}, // admin grants every scope
	} {
		var who p.WhoamiResult
		is.NoErr(dialToken(t, s, tc.tok).Call(testContext(t), p.MethodAccessWhoami, nil, &who))
		is.Equal(who.Name, tc.tok.Name)
		is.True(!who.Anonymous)
		is.Equal(who.Scopes, tc.scopes)
		is.Equal(who.MCPDeployments, []string{})
		is.Equal(who.MCPConnections, []string{})
		is.Equal(who.MCPFace.Tools, "auto") // the server's MCP face, its defaults filled in
		is.Equal(who.MCPFace.MaxTools, 64)
		// the methods it may call: those of its scopes, and no other
		is.True(slices.IsSorted(who.Methods))
		is.True(slices.Contains(who.Methods, p.MethodRunsInspect))
		is.True(slices.Contains(who.Methods, p.MethodAccessWhoami))
		is.Equal(slices.Contains(who.Methods, p.MethodRunsStart), slices.Contains(tc.scopes, "run"))
		is.Equal(slices.Contains(who.Methods, p.MethodDeploymentsSave), slices.Contains(tc.scopes, "author"))
	}
}
