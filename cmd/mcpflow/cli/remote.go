package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// defaultURL is where the client commands find the server unless --url
// or $MCPFLOW_URL says otherwise.
const defaultURL = "ws://127.0.0.1:8765/ws"

// Environment variables of the client commands.
const (
	envURL   = "MCPFLOW_URL"
	envToken = "MCPFLOW_TOKEN"
)

// Output formats (-o).
const (
	outputTable = "table"
	outputJSON  = "json"
)

// remote holds the flags the client commands share: how to reach the
// server, how to print, and how long a request may take. One process
// runs one command, so every client command binds the same remote.
type remote struct {
	url     string
	token   string
	output  string
	timeout time.Duration
}

// addFlags adds the shared flags to cmd and its subcommands. Neither
// flag's default shows an environment value: a token or a URL with a
// secret in its query never appears in help.
func (r *remote) addFlags(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&r.url, "url", "", "the server's WebSocket URL (default "+defaultURL+", or $"+envURL+")")
	f.StringVar(&r.token, "token", "", "bearer token to send (default $"+envToken+")")
	addOutputFlag(f, &r.output)
	f.DurationVar(&r.timeout, "timeout", 30*time.Second, "deadline for connecting and for each request")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(outputTable, outputJSON))
}

// addOutputFlag adds -o.
func addOutputFlag(f *pflag.FlagSet, output *string) {
	f.StringVarP(output, "output", "o", outputTable, "output format: table (for people) or json (the raw result, for scripts)")
}

// conn is one client command's connection and output.
type conn struct {
	*client.Client
	r   *remote
	out io.Writer
	err io.Writer
}

// json reports whether -o json was asked for.
func (c *conn) json() bool { return c.r.output == outputJSON }

// do connects, runs fn, and closes the connection. SIGINT or SIGTERM
// cancels fn's context.
func (r *remote) do(cmd *cobra.Command, fn func(ctx context.Context, c *conn) error) error {
	if err := checkOutputAndTimeout(r.output, r.timeout); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cl, err := r.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	return fn(ctx, &conn{Client: cl, r: r, out: cmd.OutOrStdout(), err: cmd.ErrOrStderr()})
}

// dial connects to the server. Its error never holds the token, and shows
// the URL without its user info or query.
func (r *remote) dial(ctx context.Context) (*client.Client, error) {
	u := firstSet(r.url, os.Getenv(envURL), defaultURL)
	token := firstSet(r.token, os.Getenv(envToken))
	dctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cl, err := client.DialToken(dctx, u, token)
	if err != nil {
		// The client's error names the URL as given: keep only its cause.
		cause := errors.Unwrap(err)
		if cause == nil {
			cause = err
		}
		if refused(cause) {
			return nil, withCode(ExitUnreachable, fmt.Errorf("connect to %s: %w; %s", redactURL(u), cause, unreachableHint(redactURL(u))))
		}
		return nil, withCode(ExitUnreachable, fmt.Errorf("connect to %s: %w", redactURL(u), cause))
	}
	return cl, nil
}

// firstSet is the first non-empty value.
func firstSet(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// redactURL is u without user info, query and fragment.
func redactURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return "the server URL"
	}
	parsed.User, parsed.RawQuery, parsed.ForceQuery, parsed.Fragment, parsed.RawFragment = nil, "", false, "", ""
	return parsed.String()
}

// call invokes method within the request timeout and returns its raw
// result.
func (c *conn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.callWithin(ctx, c.r.timeout, method, params)
}

// callWithin invokes method within d and returns its raw result.
func (c *conn) callWithin(ctx context.Context, d time.Duration, method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var raw json.RawMessage
	if err := c.Call(ctx, method, params, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// show prints a result: with -o json the raw result, otherwise the table
// that table draws from it decoded as a T. It returns the decoded result.
func show[T any](c *conn, method string, raw json.RawMessage, table func(*table, T)) (T, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("%s: decode result: %w", method, err)
	}
	if c.json() {
		return v, printRaw(c.out, raw)
	}
	t := newTable(c.out)
	table(t, v)
	return v, t.flush()
}

// callShow is call then show.
func callShow[T any](ctx context.Context, c *conn, method string, params any, table func(*table, T)) (T, error) {
	raw, err := c.call(ctx, method, params)
	if err != nil {
		var zero T
		return zero, err
	}
	return show(c, method, raw, table)
}

// showing makes cmd a command of one call: params builds the method's
// params from the arguments (an error there is the caller's, reported
// before connecting), and draw its table.
func showing[R any](r *remote, cmd *cobra.Command, method string, params func(cmd *cobra.Command, args []string) (any, error), draw func(*table, R)) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ps, err := params(cmd, args)
		if err != nil {
			return err
		}
		return r.do(cmd, func(ctx context.Context, c *conn) error {
			_, err := callShow(ctx, c, method, ps, draw)
			return err
		})
	}
	return cmd
}

// noParams is the params of a method that takes none.
func noParams(*cobra.Command, []string) (any, error) { return p.Empty{}, nil }

// idParams are the params of a method that takes the one argument as id.
func idParams(id func(string) any) func(*cobra.Command, []string) (any, error) {
	return func(_ *cobra.Command, args []string) (any, error) { return id(args[0]), nil }
}

// printRaw prints a JSON document indented, one document per output.
func printRaw(w io.Writer, raw json.RawMessage) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return fmt.Errorf("print result: %w", err)
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

// printJSON prints v as indented JSON.
func printJSON(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("print result: %w", err)
	}
	return printRaw(w, raw)
}

// readJSONArg reads a JSON object given inline, as @FILE, or as @- (or,
// for a FILE argument, -) from stdin.
func readJSONArg(arg string, stdin io.Reader) (map[string]any, error) {
	data := []byte(arg)
	if name, ok := cutFileRef(arg); ok {
		var err error
		if data, err = readFileOrStdin(name, stdin); err != nil {
			return nil, err
		}
	}
	return decodeObject(data)
}

// objectFile reads the JSON object of a FILE|- argument, what it is
// named in errors.
func objectFile(arg string, cmd *cobra.Command, what string) (map[string]any, error) {
	return objectFileFrom(arg, cmd.InOrStdin(), what)
}

// objectFileFrom is objectFile reading - from stdin.
func objectFileFrom(arg string, stdin io.Reader, what string) (map[string]any, error) {
	data, err := readFileOrStdin(arg, stdin)
	if err != nil {
		return nil, err
	}
	obj, err := decodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, arg, err)
	}
	return obj, nil
}

// cutFileRef splits "@name" into name.
func cutFileRef(arg string) (string, bool) {
	if len(arg) > 1 && arg[0] == '@' {
		return arg[1:], true
	}
	return "", false
}

// readFileOrStdin reads the file name, or stdin for "-".
func readFileOrStdin(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		data, err := io.ReadAll(io.LimitReader(stdin, maxInput))
		if err != nil {
			return nil, fmt.Errorf("read stdin: %w", err)
		}
		return data, nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return data, nil
}

// maxInput bounds what is read from stdin.
const maxInput = 16 << 20

// decodeObject decodes a JSON object.
func decodeObject(data []byte) (map[string]any, error) {
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if obj == nil {
		return nil, errors.New("not a JSON object: null")
	}
	if dec.More() {
		return nil, errors.New("not a JSON object: more than one value")
	}
	return obj, nil
}
