package integration

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes"
)

// TestAnOAuthSourceNeedsALoginThenRefreshesAndRotates runs the real
// binary against an MCP server protected as the MCP authorization spec
// says and its authorization server (fakes, real HTTP on loopback):
//
//   - the source's session meets a 401, discovers the authorization
//     server, registers a client and shows needs_login, with the
//     authorization host in its status;
//   - `mcpflow sources login`, its browser step a GET that follows the
//     authorization redirect, completes the flow with PKCE and the
//     registered client; the session connects, and a run calls the tool;
//   - the access token expires early and is refreshed, the refresh token
//     rotating; the rotated one is stored: a restarted server refreshes
//     with it;
//   - a redirect of the MCP endpoint to another origin carries no token;
//   - a revoked refresh token puts the source back in needs_login, and
//     runs fail fast with an error that says to log in;
//   - no token is in any answer, CLI output, log line, redirected request
//     or the store's files.
func TestAnOAuthSourceNeedsALoginThenRefreshesAndRotates(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("oauth: starts the real binary twice")
	}
	is := is.New(t)
	up := fakes.NewOAuthServer(fakes.OAuthOptions{Scopes: []string{"mcp:tools"}})
	t.Cleanup(up.Close)
	elsewhere := newHeaderRecorder(t)
	const id = "remote.default"
	authHost := up.AS.Listener.Addr().String()
	dir := t.TempDir()
	cfgPath := writeConfig(t, dir, config.Connection{Kind: "mcp", ID: id, Auth: &config.SourceAuth{Kind: config.AuthOAuth},
		Transport: config.Transport{Kind: config.TransportHTTP, URL: up.URL}})
	proc := startProcess(t, cfgPath, "first.log", "--log-level", "debug")
	tr := &transcript{t: t, c: dialURL(t, proc.url)}
	var outputs []string
	cli := func(code int, args ...string) cliResult {
		r := cliTool{t: t, url: proc.url}.want(code, args...)
		outputs = append(outputs, r.stdout, r.stderr)
		return r
	}
	status := func() p.SessionStatus {
		t.Helper()
		var res p.ListConnectionStatusesResult
		raw, err := tr.call(p.MethodConnectionStatusesList, nil)
		is.NoErr(err)
		is.NoErr(json.Unmarshal(raw, &res))
		is.Equal(len(res.Statuses), 1)
		return res.Statuses[0].Session
	}
	needsLogin := func(why string) {
		t.Helper()
		st := status()
		is.Equal(st.State, "needs_login")
		is.Equal(deref(st.LoginHost), authHost)                                             // where to log in
		is.True(strings.Contains(fmt.Sprint(deref(st.LastError)), why))                     // why
		is.True(strings.Contains(fmt.Sprint(deref(st.LastError)), "mcpflow sources login")) // and how
		is.True(strings.Contains(cli(0, "status").stdout, "needs_login ("+authHost+")"))
	}

	// The first use meets the 401: discovery, registration, needs_login.
	_, err := tr.call(p.MethodConnectionsRefreshCatalog, p.RefreshCatalogParams{ConnectionID: id})
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "needs_login"))
	is.Equal(up.Registrations(), 1) // dynamic client registration
	needsLogin("no login yet")

	// The login, its browser a GET that follows the redirects.
	done := cliJSON[p.LoginCompleteResult](t, cli(0, "sources", "login", id, "--browser", "get", "-o", "json"))
	is.Equal(done.State, "open")
	is.Equal(done.AuthorizationHost, authHost)
	is.True(done.NodeCount > 0)
	is.Equal(up.Logins(), 1) // a code exchanged with its PKCE verifier
	is.Equal(status().State, "open")
	echo := tr.deployTool(id, "echo")
	run := tr.run(echo, map[string]any{"message": "hello"})
	is.Equal(run["status"], "completed")
	is.Equal(run["output"], map[string]any{"message": "hello"})

	// The access token expires: one refresh, which rotates the refresh
	// token, and the run completes.
	up.ExpireAccessTokens()
	is.Equal(tr.run(echo, map[string]any{"message": "again"})["status"], "completed")
	is.Equal(up.Refreshes(), 1)
	is.Equal(len(up.LiveRefreshTokens()), 1) // the one before it no longer works

	// A redirect to another origin: followed, without the token.
	up.RedirectTo(elsewhere.URL + "/mcp")
	_, err = tr.call(p.MethodConnectionsRefreshCatalog, p.RefreshCatalogParams{ConnectionID: id})
	is.True(err != nil)
	is.True(elsewhere.requests() > 0)
	is.True(!elsewhere.saw("Bearer"))
	up.RedirectTo("")

	// A restarted server refreshes with the rotated refresh token it
	// stored (the first one would be refused).
	exitCode, _ := proc.terminate(t)
	is.Equal(exitCode, 0)
	first := proc
	proc = startProcess(t, cfgPath, "second.log", "--log-level", "debug")
	tr.c = dialURL(t, proc.url)
	up.ExpireAccessTokens()
	tr.eventually(p.MethodConnectionsRefreshCatalog, p.RefreshCatalogParams{ConnectionID: id}, succeeded)
	is.Equal(tr.run(echo, map[string]any{"message": "after restart"})["status"], "completed")
	is.Equal(up.Refreshes(), 2)
	is.Equal(up.Logins(), 1) // no new login

	// The grant is revoked: the refresh is refused for good, the source
	// needs a login again, and runs fail fast saying so.
	up.RevokeRefreshTokens()
	up.ExpireAccessTokens()
	for _, msg := range []string{"revoked", "still revoked"} {
		run = tr.run(echo, map[string]any{"message": msg})
		is.Equal(run["status"], "failed")
		is.True(strings.Contains(fmt.Sprint(run["error"]), "needs_login"))
		is.True(strings.Contains(fmt.Sprint(run["error"]), "mcpflow sources login "+id))
	}
	needsLogin("refused the refresh token (invalid_grant)")
	rec := tr.must("workflow.admin.auth.inspect", map[string]any{"auth_ref": id})
	is.True(!strings.Contains(fmt.Sprint(rec), "refresh_token")) // the dead tokens are gone from the record

	// No token anywhere.
	_, _ = proc.terminate(t)
	logs := ""
	for _, pr := range []*process{first, proc} {
		data, err := os.ReadFile(pr.logs)
		is.NoErr(err)
		logs += string(data)
	}
	var stored []byte
	is.NoErr(filepath.WalkDir(filepath.Join(dir, "store"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		stored = append(stored, data...)
		return err
	}))
	tokens := up.Minted()
	is.Equal(len(tokens), 6) // a login and two refreshes, each an access and a refresh token
	for _, tok := range tokens {
		where := map[string]string{"an answer": all(tr), "the CLI's output": strings.Join(outputs, "\n"), "the log": logs, "the store's files": string(stored)}
		for name, text := range where {
			if strings.Contains(text, tok) {
				t.Errorf("%s shows a token", name)
			}
		}
		is.True(!elsewhere.saw(tok)) // nor did the other origin get one
	}
	is.True(strings.Contains(logs, "oauth login complete"))
	is.True(strings.Contains(logs, "oauth auth record saved"))
	t.Logf("grepped %d answers, %d CLI outputs, %d bytes of log and %d bytes of store for %d tokens", len(tr.entries), len(outputs), len(logs), len(stored), len(tokens))
}

// TestAnOAuthSourceDiagnosesItsLoginAndItsStatusForgetsTheLoginError
// runs the real binary against the fake OAuth-protected MCP server: a
// source with auth kind oauth diagnoses needs_login, naming the login
// command, before its first use and after its discovery; once `mcpflow
// sources login` logged it in it diagnoses ok, and its status, in the API
// and in `mcpflow status`, no longer shows the needs_login error the
// login answered.
func TestAnOAuthSourceDiagnosesItsLoginAndItsStatusForgetsTheLoginError(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("oauth: starts the real binary")
	}
	is := is.New(t)
	up := fakes.NewOAuthServer(fakes.OAuthOptions{Scopes: []string{"mcp:tools"}})
	t.Cleanup(up.Close)
	const id = "remote.default"
	cfgPath := writeConfig(t, t.TempDir(), config.Connection{Kind: "mcp", ID: id, Auth: &config.SourceAuth{Kind: config.AuthOAuth},
		Transport: config.Transport{Kind: config.TransportHTTP, URL: up.URL}})
	proc := startProcess(t, cfgPath, "mcpflow.log")
	c := dialURL(t, proc.url)
	diagnose := func() p.SourceDiagnosis {
		t.Helper()
		var d p.SourceDiagnosis
		is.NoErr(c.Call(testContext(t), p.MethodSourcesDiagnose, p.InspectSourceParams{SourceID: id}, &d))
		return d
	}
	needsLogin := func(d p.SourceDiagnosis) {
		t.Helper()
		is.Equal(d.Status, "error")
		is.Equal(len(d.Diagnostics), 1)
		is.Equal(d.Diagnostics[0].Code, "needs_login")
		is.True(strings.Contains(fmt.Sprint(deref(d.Diagnostics[0].RepairHint)), "mcpflow sources login "+id)) // the repair: the login
	}

	needsLogin(diagnose()) // before its first use: no auth record yet
	_, err := c.RefreshConnectionCatalog(testContext(t), id)
	is.True(err != nil) // the first use meets the 401: discovery, needs_login
	d := diagnose()
	needsLogin(d) // an oauth record, without tokens
	is.Equal(deref(d.Auth.Scheme), any("oauth"))
	is.True(d.Auth.TransportSupported) // http takes oauth

	done := cliJSON[p.LoginCompleteResult](t, cliTool{t: t, url: proc.url}.want(0, "sources", "login", id, "--browser", "get", "-o", "json"))
	is.Equal(done.State, "open")
	d = diagnose()
	is.Equal(d.Status, "ok") // logged in and serving
	is.Equal(len(d.Diagnostics), 0)

	var res p.ListConnectionStatusesResult
	is.NoErr(c.Call(testContext(t), p.MethodConnectionStatusesList, nil, &res))
	is.Equal(len(res.Statuses), 1)
	st := res.Statuses[0].Session
	is.Equal(st.State, "open")
	is.Equal(deref(st.LastError), nil) // the needs_login error is the login's past
	is.Equal(deref(st.LoginHost), nil)
	out := cliTool{t: t, url: proc.url}.want(0, "status").stdout
	is.True(strings.Contains(out, id))
	is.True(!strings.Contains(out, "needs_login")) // under SESSION or LAST ERROR
}
