package cli

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/oauth2"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// envBrowser names the command `sources login` opens the authorization
// URL with (as --browser does).
const envBrowser = "MCPFLOW_BROWSER"

// Browser modes of `sources login` besides a command.
const (
	// browserNone prints the URL only.
	browserNone = "none"
	// browserGet makes the login GET the URL itself and follow its
	// redirects: for an authorization server that approves without a
	// person (automation, the integration tests).
	browserGet = "get"
)

// loginFlags are the flags of `sources login`.
type loginFlags struct {
	browser string
	port    int
	wait    time.Duration
}

func newSourcesLoginCommand(r *remote) *cobra.Command {
	var f loginFlags
	cmd := &cobra.Command{
		Use:   "login SOURCE",
		Short: "Log in to a source that needs an OAuth login (state needs_login)",
		Long: `Log in to an HTTP source with auth {"kind": "oauth"}: the OAuth 2.1 authorization
code flow with PKCE (S256) of the MCP authorization spec. It opens the
authorization URL in your browser (xdg-open, or --browser / $` + envBrowser + `; it prints
the URL when there is none), listens for the redirect on a loopback port, and
has the server exchange the code for tokens. The server stores them as the
source's auth record, sealed, and connects its session at once.

--browser none only prints the URL; --browser get makes mcpflow follow the
URL itself, for an authorization server that approves without a person.`,
		Example: `  mcpflow sources login linear.default
  mcpflow sources login github.default --browser none   # open the printed URL yourself`,
		Args: cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&f.browser, "browser", "", "command that opens the URL (default $"+envBrowser+", else xdg-open); none prints it; get follows it")
	cmd.Flags().IntVar(&f.port, "port", 0, "loopback port of the redirect (default the source's auth.redirect_port, else a free one)")
	cmd.Flags().DurationVar(&f.wait, "wait", 5*time.Minute, "how long to wait for the login in the browser")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return r.do(cmd, func(ctx context.Context, c *conn) error { return login(ctx, c, args[0], f) })
	}
	return cmd
}

// login runs the login of source id.
func login(ctx context.Context, c *conn, id string, f loginFlags) error {
	port := f.port
	if port == 0 {
		var err error
		if port, err = redirectPort(ctx, c, id); err != nil {
			return err
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("listen for the login's redirect: %w", err)
	}
	redirect := "http://" + l.Addr().String() + "/callback"
	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	raw, err := c.call(ctx, p.MethodConnectionsLoginStart, p.LoginStartParams{
		ConnectionID: id, RedirectURI: redirect, CodeChallenge: oauth2.S256ChallengeFromVerifier(verifier), State: state})
	if err != nil {
		_ = l.Close()
		return err
	}
	var start p.LoginStartResult
	if err := json.Unmarshal(raw, &start); err != nil {
		_ = l.Close()
		return fmt.Errorf("%s: decode result: %w", p.MethodConnectionsLoginStart, err)
	}
	wctx, cancel := context.WithTimeout(ctx, f.wait)
	defer cancel()
	cb := newCallback(state, start.Issuer)
	srv := &http.Server{Handler: cb, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(l) }() // ends with srv.Close below
	defer func() { _ = srv.Close(); <-served }()
	opened := openBrowser(wctx, c, f.browser, start)
	var code string
	select {
	case res := <-cb.done:
		if res.err != nil {
			return res.err
		}
		code = res.code
	case err := <-opened:
		return err
	case <-wctx.Done():
		return fmt.Errorf("no login within %s: %w", f.wait, wctx.Err())
	}
	raw, err = c.callWithin(ctx, max(c.r.timeout, 2*time.Minute), p.MethodConnectionsLoginComplete,
		p.LoginCompleteParams{ConnectionID: id, Code: code, CodeVerifier: verifier, RedirectURI: redirect})
	if err != nil {
		return err
	}
	_, err = show(c, p.MethodConnectionsLoginComplete, raw, func(t *table, res p.LoginCompleteResult) {
		t.pairs("source", res.ConnectionID, "logged in at", res.AuthorizationHost, "session", res.State, "tools", res.NodeCount)
	})
	return err
}

// redirectPort is the redirect port source id fixes (auth.redirect_port),
// or 0 for a free one.
func redirectPort(ctx context.Context, c *conn, id string) (int, error) {
	raw, err := c.call(ctx, p.MethodConnectionsList, p.Empty{})
	if err != nil {
		return 0, err
	}
	var res p.ListConnectionsResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return 0, fmt.Errorf("%s: decode result: %w", p.MethodConnectionsList, err)
	}
	for _, conn := range res.Connections {
		if conn.ID != id {
			continue
		}
		auth, _ := conn.Metadata["auth"].(map[string]any)
		if auth == nil {
			return 0, withCode(ExitError, fmt.Errorf("source %q has no auth {\"kind\": \"oauth\"}: it takes no login", id))
		}
		port, _ := auth["redirect_port"].(float64)
		return int(port), nil
	}
	return 0, withCode(ExitError, fmt.Errorf("unknown source %q", id))
}

// openBrowser shows the user the authorization URL: it always prints it
// (on stderr, where it does not mix with -o json), and opens it as mode
// says. The channel gets an error when the opening failed for good (get),
// and nothing otherwise.
func openBrowser(ctx context.Context, c *conn, mode string, start p.LoginStartResult) <-chan error {
	failed := make(chan error, 1)
	mode = firstSet(mode, os.Getenv(envBrowser))
	fmt.Fprintf(c.err, "Log in to %s for source %s: open\n  %s\n", start.AuthorizationHost, start.ConnectionID, start.AuthorizationURL)
	switch mode {
	case browserNone:
	case browserGet:
		go func() { // ends when the GET does: the redirect lands on the login's own listener
			if err := followAuthorization(ctx, start.AuthorizationURL); err != nil {
				failed <- err
			}
		}()
	default:
		name := mode
		if name == "" {
			if _, err := exec.LookPath("xdg-open"); err != nil {
				break // no browser here: the printed URL is the way
			}
			name = "xdg-open"
		}
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := exec.CommandContext(octx, name, start.AuthorizationURL).Run(); err != nil {
			fmt.Fprintf(c.err, "could not open a browser with %s (%v); open the URL above yourself\n", name, err)
		}
	}
	return failed
}

// followAuthorization GETs u and follows its redirects.
func followAuthorization(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("the authorization URL does not parse: %w", err)
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err // its URL is not worth repeating
	}
	if err != nil {
		return fmt.Errorf("follow the authorization URL: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("follow the authorization URL: the authorization server answered %d", resp.StatusCode)
	}
	return nil
}
