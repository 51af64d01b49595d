package integration

// The MCP clients that mcp_face_test.go drives mcpflow's MCP face with,
// behind one interface: a scenario in (what to list, call, answer and
// wait for), a driverResult out (what the client saw), checked in Go.
//
//   - ts-sdk-v1: npm @modelcontextprotocol/sdk@1.32.2, 2025-11-25
//     sessions, through testdata/mcpv1.mjs;
//   - ts-client-v2: npm @modelcontextprotocol/client@2.3.1 with version
//     negotiation auto (2026-07-28), through testdata/mcpv2.mjs;
//   - go-sdk: go-sdk's own client (mcp.NewClient,
//     mcp.StreamableClientTransport), modern-first (2026-07-28), and
//     go-sdk-2025, the same asking for 2025-11-25.
//
// The Node drivers are installed by .ci/run under $MCPFLOW_PEERS (default
// <module root>/.peers); a missing one skips, or fails under CI=true.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Pinned versions of the TypeScript MCP clients, installed by .ci/run.
const (
	tsSDKPackage    = "@modelcontextprotocol/sdk"
	tsSDKVersion    = "1.32.2"
	tsClientPackage = "@modelcontextprotocol/client"
	tsClientVersion = "2.3.1"
)

// mcpClient is one MCP client the face is tested with.
type mcpClient struct {
	name string
	// The TypeScript ones: the driver under testdata/ and its package.
	script, pkg, version string
	// go-sdk: the protocol version it asks for ("": its latest).
	protocol string
}

var (
	tsV1       = mcpClient{name: "ts-sdk-v1", script: "mcpv1.mjs", pkg: tsSDKPackage, version: tsSDKVersion}
	tsV2       = mcpClient{name: "ts-client-v2", script: "mcpv2.mjs", pkg: tsClientPackage, version: tsClientVersion}
	goSDK      = mcpClient{name: "go-sdk"}
	goSDK2025  = mcpClient{name: "go-sdk-2025", protocol: "2025-11-25"}
	mcpClients = []mcpClient{tsV1, tsV2, goSDK, goSDK2025}
)

// modern reports whether c speaks 2026-07-28 to a server that offers it.
func (c mcpClient) modern() bool { return c == tsV2 || c == goSDK }

// scenario is what a client does; testdata/mcpdriver.mjs documents it.
type scenario struct {
	URL         string         `json:"url,omitempty"`
	Stdio       *stdioCommand  `json:"stdio,omitempty"`
	Token       string         `json:"token,omitempty"`
	Elicitation bool           `json:"elicitation,omitempty"`
	Elicit      []elicitAnswer `json:"elicit,omitempty"`
	// ElicitationURL declares URL elicitation too (go-sdk only).
	ElicitationURL bool `json:"elicitation_url,omitempty"`
	// Sampling declares sampling, and Sample answers every sampling
	// request (ts-sdk-v1 and go-sdk).
	Sampling bool           `json:"sampling,omitempty"`
	Sample   map[string]any `json:"sample,omitempty"`
	Steps    []step         `json:"steps"`
}

type stdioCommand struct {
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
}

type elicitAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

type step struct {
	Op        string         `json:"op"`
	Name      string         `json:"name,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Progress  bool           `json:"progress,omitempty"`
	RunIDFrom *int           `json:"run_id_from,omitempty"`
	Abort     string         `json:"abort,omitempty"`
	Tool      string         `json:"tool,omitempty"` // await_list_changed: until a listing has it
}

func listStep() step { return step{Op: "list"} }

func callStep(name string, args map[string]any) step {
	if args == nil {
		args = map[string]any{}
	}
	return step{Op: "call", Name: name, Arguments: args}
}

func markStep(name string) step { return step{Op: "mark", Name: name} }

// driverResult is what the client saw.
type driverResult struct {
	ProtocolVersion string         `json:"protocol_version"`
	Steps           []stepResult   `json:"steps"`
	Elicitations    []elicitation  `json:"elicitations"`
	Samplings       []sampling     `json:"samplings"`
	ListChanged     int            `json:"list_changed"`
	Fatal           *driverError   `json:"fatal"`
	Server          map[string]any `json:"server"`
}

type elicitation struct {
	Message         string         `json:"message"`
	RequestedSchema map[string]any `json:"requestedSchema"`
	Mode            string         `json:"mode"`
	URL             string         `json:"url"`
	ElicitationID   string         `json:"elicitationId"`
}

// sampling is a sampling request the client received.
type sampling struct {
	Messages     []map[string]any `json:"messages"`
	SystemPrompt string           `json:"systemPrompt"`
	MaxTokens    int              `json:"maxTokens"`
}

type stepResult struct {
	Tools            []toolInfo     `json:"tools"`
	Name             string         `json:"name"`
	Result           *callResult    `json:"result"`
	Error            *driverError   `json:"error"`
	Progress         []progressNote `json:"progress"`
	ProgressAtResult int            `json:"progress_at_result"`
	Aborted          bool           `json:"aborted"`
	Changed          bool           `json:"changed"`
	// Ended says the end_session step ended the client's session (the
	// v1 TypeScript driver only).
	Ended bool `json:"ended"`
	// The resources step's listings, and the read step's contents (the
	// TypeScript drivers only).
	Resources         []resourceInfo     `json:"resources"`
	ResourceTemplates []resourceInfo     `json:"resource_templates"`
	Contents          []resourceContents `json:"contents"`
}

// resourceInfo is a resource, or a resource template, as listed.
type resourceInfo struct {
	Name        string `json:"name"`
	URI         string `json:"uri"`
	URITemplate string `json:"uriTemplate"`
}

// resourceContents is one content of a resources/read result.
type resourceContents struct {
	URI  string `json:"uri"`
	Text string `json:"text"`
	Blob string `json:"blob"`
}

type driverError struct {
	Name    string `json:"name"`
	Code    any    `json:"code"`
	Message string `json:"message"`
}

type toolInfo struct {
	Name         string         `json:"name"`
	Title        string         `json:"title"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"inputSchema"`
	OutputSchema map[string]any `json:"outputSchema"`
	Annotations  map[string]any `json:"annotations"`
}

type progressNote struct {
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total"`
	Message  string   `json:"message"`
}

type callResult struct {
	Content           []textBlock     `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// envelope is the structuredContent of every deployment tool and
// companion tool: the run as it stands.
type envelope struct {
	RunID     string         `json:"run_id"`
	Status    string         `json:"status"`
	Outcome   *string        `json:"outcome"`
	Output    map[string]any `json:"output"`
	Interrupt map[string]any `json:"interrupt"`
	Error     any            `json:"error"`
}

// driving is a scenario under way.
type driving struct {
	client  mcpClient
	marks   chan string
	proceed func() // the next stdin line: an in-flight call is aborted, or a wait ends
	kill    func() // ends the client at once (a crashed host)
	done    chan driverResult
	logs    func() string
}

// require skips (fails in CI) when the client's runtime is missing.
func (c mcpClient) require(t *testing.T) {
	t.Helper()
	if c.script != "" {
		nodePeers(t, pinnedPeer{c.pkg, c.version})
	}
}

// run runs sc to its end and returns what the client saw.
func (c mcpClient) run(t *testing.T, sc scenario) driverResult {
	t.Helper()
	return c.start(t, sc).result(t)
}

// start starts sc; the test then waits for its marks and its result.
func (c mcpClient) start(t *testing.T, sc scenario) *driving {
	t.Helper()
	if c.script != "" {
		return c.startNode(t, sc)
	}
	return c.startGo(t, sc)
}

func (c mcpClient) startNode(t *testing.T, sc scenario) *driving {
	t.Helper()
	is := is.New(t)
	node, prefix := nodePeers(t, pinnedPeer{c.pkg, c.version})
	script, err := filepath.Abs(filepath.Join("testdata", c.script))
	is.NoErr(err) // the driver's path
	data, err := json.Marshal(sc)
	is.NoErr(err)

	cmd := exec.Command(node, script, string(data))
	cmd.Env = append(os.Environ(), "MCPFLOW_PEERS="+prefix)
	cmd.WaitDelay = 5 * time.Second // bound the wait for the pipes after a kill
	stdin, err := cmd.StdinPipe()
	is.NoErr(err)
	stderr, err := cmd.StderrPipe()
	is.NoErr(err)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	is.NoErr(cmd.Start()) // start the driver

	d := &driving{client: c, marks: make(chan string, 16), done: make(chan driverResult, 1)}
	var mu sync.Mutex
	var logs strings.Builder
	d.logs = func() string {
		mu.Lock()
		defer mu.Unlock()
		return logs.String()
	}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			if name, ok := strings.CutPrefix(lines.Text(), "@mark "); ok {
				d.marks <- name
				continue
			}
			mu.Lock()
			logs.WriteString(lines.Text() + "\n")
			mu.Unlock()
		}
	}()
	d.proceed = func() { _, _ = stdin.Write([]byte("go\n")) }
	d.kill = func() { _ = cmd.Process.Kill() }
	go func() {
		<-scanned // stderr is read to its end before Wait closes it
		err := cmd.Wait()
		var got driverResult
		if err != nil {
			got.Fatal = &driverError{Name: "exit", Message: err.Error()}
		} else if jerr := json.Unmarshal(stdout.Bytes(), &got); jerr != nil {
			got.Fatal = &driverError{Name: "stdout", Message: fmt.Sprintf("%v: %q", jerr, stdout.String())}
		}
		d.done <- got
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-scanned
	})
	return d
}

// awaitMark waits up to 30 s for the client to reach mark name.
func (d *driving) awaitMark(t *testing.T, name string) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	select {
	case got := <-d.marks:
		is.Equal(got, name) // the client reached the next mark
	case res := <-d.done:
		t.Logf("%s ended before mark %q: %+v\n%s", d.client.name, name, res.Fatal, d.logs())
		d.done <- res
		is.Fail() // the client reaches the mark
	case <-time.After(30 * time.Second):
		t.Logf("%s: no mark %q within 30s\n%s", d.client.name, name, d.logs())
		is.Fail() // the client reaches the mark in time
	}
}

// result waits up to 90 s for the client's result; a client that could
// not run the scenario fails the test.
func (d *driving) result(t *testing.T) driverResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	select {
	case got := <-d.done:
		if got.Fatal != nil {
			t.Logf("%s: %+v\n%s", d.client.name, *got.Fatal, d.logs())
		}
		is.Equal(got.Fatal, (*driverError)(nil)) // the client ran the scenario
		return got
	case <-time.After(90 * time.Second):
		t.Logf("%s: no result within 90s\n%s", d.client.name, d.logs())
		is.Fail() // the client finishes in time
	}
	return driverResult{}
}

// startGo runs sc with go-sdk's client in a goroutine of the test.
func (c mcpClient) startGo(t *testing.T, sc scenario) *driving {
	t.Helper()
	d := &driving{client: c, marks: make(chan string, 16), done: make(chan driverResult, 1), logs: func() string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	proceed := make(chan struct{}, 1)
	d.proceed = func() { proceed <- struct{}{} }
	d.kill = cancel
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		d.done <- runGoScenario(ctx, c.protocol, sc, d.marks, proceed)
	}()
	t.Cleanup(func() {
		cancel()
		<-ended
	})
	return d
}

// goRun is one go-sdk client session running a scenario. Progress,
// elicitations and list_changed arrive on the SDK's goroutines.
type goRun struct {
	sc      scenario
	order   *wireOrder
	mu      sync.Mutex
	out     driverResult
	notes   map[string][]progressNote // by progress token
	noted   chan struct{}             // a progress notification was handled
	changed chan struct{}
}

func runGoScenario(ctx context.Context, protocol string, sc scenario, marks chan<- string, proceed <-chan struct{}) driverResult {
	r := &goRun{sc: sc, order: &wireOrder{before: map[string]int{}}, notes: map[string][]progressNote{}, noted: make(chan struct{}, 1), changed: make(chan struct{}, 16)}
	opts := &mcp.ClientOptions{
		Capabilities:                &mcp.ClientCapabilities{},
		ToolListChangedHandler:      r.listChanged,
		ProgressNotificationHandler: r.progress,
	}
	if sc.Elicitation {
		opts.Capabilities.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
		if sc.ElicitationURL {
			opts.Capabilities.Elicitation.URL = &mcp.URLElicitationCapabilities{}
		}
		opts.ElicitationHandler = r.elicit
	}
	if sc.Sampling {
		opts.Capabilities.Sampling = &mcp.SamplingCapabilities{}
		opts.CreateMessageHandler = r.sample
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpflow-test-go", Version: "v1.8.0"}, opts)
	transport := &mcp.StreamableClientTransport{Endpoint: sc.URL, HTTPClient: watchedClient(sc.Token, r.order), MaxRetries: -1}
	connectCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cs, err := client.Connect(connectCtx, transport, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		r.out.Fatal = &driverError{Name: "connect", Message: err.Error()}
		return r.out
	}
	defer cs.Close()
	r.out.ProtocolVersion = cs.InitializeResult().ProtocolVersion
	listenedAt := 0
	for i, s := range sc.Steps {
		var res stepResult
		switch s.Op {
		case "list":
			res = r.list(ctx, cs)
		case "listen": // go-sdk subscribes at Connect, as ToolListChangedHandler is set
			listenedAt = r.listChangedCount()
		case "mark":
			marks <- s.Name
		case "wait":
			select {
			case <-proceed:
			case <-ctx.Done():
			}
		case "await_list_changed":
			res = r.awaitListChanged(ctx, cs, listenedAt, s.Tool)
		case "call":
			res = r.call(ctx, cs, i, s, marks, proceed)
		default:
			r.out.Fatal = &driverError{Name: "scenario", Message: "unknown step op " + s.Op}
			return r.out
		}
		r.mu.Lock()
		r.out.Steps = append(r.out.Steps, res)
		r.mu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out
}

func (r *goRun) listChanged(context.Context, *mcp.ToolListChangedRequest) {
	r.mu.Lock()
	r.out.ListChanged++
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default: // a waiter reads the count
	}
}

func (r *goRun) listChangedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.ListChanged
}

func (r *goRun) progress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	token := fmt.Sprint(req.Params.ProgressToken)
	note := progressNote{Progress: req.Params.Progress, Message: req.Params.Message}
	if req.Params.Total != 0 {
		total := req.Params.Total
		note.Total = &total
	}
	r.notes[token] = append(r.notes[token], note)
	select {
	case r.noted <- struct{}{}:
	default: // a waiter reads the notes
	}
}

// awaitNotes waits, 5 s at most, until the handler had n progress
// notifications of token: go-sdk runs notification handlers on goroutines
// of their own, so they may come after CallTool returns.
func (r *goRun) awaitNotes(token string, n int) []progressNote {
	deadline := time.After(5 * time.Second)
	for {
		r.mu.Lock()
		notes := append([]progressNote{}, r.notes[token]...)
		r.mu.Unlock()
		if len(notes) >= n {
			return notes
		}
		select {
		case <-r.noted:
		case <-deadline:
			return notes
		}
	}
}

func (r *goRun) elicit(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var e elicitation
	if err := remarshal(req.Params, &e); err != nil {
		return nil, err
	}
	r.out.Elicitations = append(r.out.Elicitations, e)
	if len(r.sc.Elicit) == 0 {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	a := r.sc.Elicit[min(len(r.out.Elicitations), len(r.sc.Elicit))-1]
	return &mcp.ElicitResult{Action: a.Action, Content: a.Content}, nil
}

func (r *goRun) sample(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s sampling
	if err := remarshal(req.Params, &s); err != nil {
		return nil, err
	}
	r.out.Samplings = append(r.out.Samplings, s)
	var answer mcp.CreateMessageResult
	return &answer, remarshal(r.sc.Sample, &answer)
}

func (r *goRun) list(ctx context.Context, cs *mcp.ClientSession) stepResult {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return stepResult{Error: &driverError{Message: err.Error()}}
	}
	var out stepResult
	if err := remarshal(res.Tools, &out.Tools); err != nil {
		return stepResult{Error: &driverError{Name: "decode", Message: err.Error()}}
	}
	return out
}

// awaitListChanged waits for a list_changed since the listen step, and
// then for more until a listing has tool ("": any listing).
func (r *goRun) awaitListChanged(ctx context.Context, cs *mcp.ClientSession, listenedAt int, tool string) stepResult {
	deadline := time.After(20 * time.Second)
	for seen := listenedAt; ; {
		for r.listChangedCount() == seen {
			select {
			case <-r.changed:
			case <-deadline:
				return stepResult{Error: &driverError{Message: "notifications/tools/list_changed: nothing within 20 s"}}
			case <-ctx.Done():
				return stepResult{Error: &driverError{Message: ctx.Err().Error()}}
			}
		}
		seen = r.listChangedCount()
		res := r.list(ctx, cs)
		res.Changed = res.Error == nil
		if tool == "" || res.Error != nil || slices.ContainsFunc(res.Tools, func(t toolInfo) bool { return t.Name == tool }) {
			return res
		}
	}
}

func (r *goRun) call(ctx context.Context, cs *mcp.ClientSession, i int, s step, marks chan<- string, proceed <-chan struct{}) stepResult {
	args := map[string]any{}
	for k, v := range s.Arguments {
		args[k] = v
	}
	if s.RunIDFrom != nil {
		args["run_id"] = nil
		if from := r.out.Steps[*s.RunIDFrom]; from.Result != nil {
			var env envelope
			if json.Unmarshal(from.Result.StructuredContent, &env) == nil {
				args["run_id"] = env.RunID
			}
		}
	}
	params := &mcp.CallToolParams{Name: s.Name, Arguments: args}
	token := fmt.Sprintf("call-%d", i)
	if s.Progress {
		params.SetProgressToken(token)
	}
	callCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var aborted atomic.Bool
	if s.Abort == "stdin" {
		marks <- "in_flight"
		go func() {
			select {
			case <-proceed:
				aborted.Store(true)
				cancel()
			case <-callCtx.Done():
			}
		}()
	}
	res, err := cs.CallTool(callCtx, params)
	out := stepResult{Name: s.Name}
	if err != nil {
		out.Error = &driverError{Message: err.Error()}
	} else {
		out.Result = new(callResult)
		if err := remarshal(res, out.Result); err != nil {
			out.Error = &driverError{Name: "decode", Message: err.Error()}
		}
	}
	out.Aborted = aborted.Load()
	out.ProgressAtResult = r.order.progressBefore(token)
	out.Progress = r.awaitNotes(token, out.ProgressAtResult)
	return out
}

// remarshal decodes v's JSON into out.
func remarshal(v, out any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// bearerClient is an HTTP client that sends token as a bearer token
// ("": none).
func bearerClient(token string) *http.Client {
	return watchedClient(token, nil)
}

// watchedClient is bearerClient whose response bodies order watches
// (nil: none).
func watchedClient(token string, order *wireOrder) *http.Client {
	return &http.Client{Transport: clientTransport{token: token, order: order, next: http.DefaultTransport}}
}

type clientTransport struct {
	token string
	order *wireOrder
	next  http.RoundTripper
}

func (c clientTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if c.token != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.next.RoundTrip(req)
	if err == nil && c.order != nil {
		resp.Body = &orderedBody{ReadCloser: resp.Body, order: c.order, seen: map[string]int{}}
	}
	return resp, err
}

// wireOrder notes, per progress token, how many progress notifications
// the stream of a request (the body of its POST) carried before the
// response that ends it: the order on the wire, which go-sdk's handlers
// do not keep.
type wireOrder struct {
	mu     sync.Mutex
	before map[string]int
}

func (w *wireOrder) progressBefore(token string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.before[token]
}

// orderedBody reads one response body, SSE or JSON, for wireOrder.
type orderedBody struct {
	io.ReadCloser
	order *wireOrder
	line  []byte
	seen  map[string]int // progress notifications so far, by token
}

func (b *orderedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	for _, c := range p[:n] {
		if c == '\n' {
			b.message()
			continue
		}
		b.line = append(b.line, c)
	}
	if err != nil {
		b.message() // a JSON body need not end with a newline
	}
	return n, err
}

// message notes the line read so far, if it is a JSON-RPC message.
func (b *orderedBody) message() {
	line := bytes.TrimPrefix(bytes.TrimSpace(b.line), []byte("data:"))
	b.line = b.line[:0]
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProgressToken any `json:"progressToken"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	switch {
	case m.Method == "notifications/progress":
		b.seen[fmt.Sprint(m.Params.ProgressToken)]++
	case m.Method == "" && len(m.ID) > 0: // a response
		b.order.mu.Lock()
		for token, n := range b.seen {
			b.order.before[token] = n
		}
		b.order.mu.Unlock()
	}
}
