package integration

// Both MCP protocol eras against the go-sdk's own conformance
// everything-server (github.com/modelcontextprotocol/go-sdk/conformance/
// everything-server, built from the module graph), run as a real
// subprocess: each test configures three sources on the same server (over
// stdio, the same server binary): one with no protocol_version (mcpflow's
// default, 2025-11-25), one pinned to 2025-11-25 (the legacy, session-ful
// era) and one to 2026-07-28 (the stateless era). It drives mcpflow
// through its WebSocket edge and records every JSON-RPC message each
// source's session sends and receives (and, over HTTP, each exchange's
// headers) to measure what the session negotiated and what the era
// changes. docs/protocol-eras.md reports the figures.

import (
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
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

const (
	conformancePackage = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"
	legacyEra          = "2025-11-25"
	statelessEra       = "2026-07-28"
	// conformanceTools is how many tools the server lists.
	conformanceTools = 28
	// transientTool is the tool test_trigger_tool_change registers.
	transientTool = "__transient_tool_for_list_changed"
	simpleText    = "This is a simple text response for testing."
)

var conformanceServer struct {
	once sync.Once
	path string
	err  error
}

// conformanceBinary builds the go-sdk conformance everything-server once
// per test binary, next to the mcpflow binary so TestMain removes it.
func conformanceBinary(t *testing.T) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	conformanceServer.once.Do(func() {
		path := filepath.Join(filepath.Dir(binary), "conformance-everything-server")
		out, err := exec.Command("go", "build", "-o", path, conformancePackage).CombinedOutput()
		if err != nil {
			conformanceServer.err = fmt.Errorf("go build %s: %w\n%s", conformancePackage, err, out)
			return
		}
		conformanceServer.path = path
	})
	is.NoErr(conformanceServer.err) // build the conformance everything-server
	return conformanceServer.path
}

// eraCase is one server setup with what each of its sources measures.
type eraCase struct {
	name      string
	transport string // config.TransportStdio or config.TransportHTTP
	stateless bool   // the HTTP server's -stateless flag
	want      map[string]eraWant
}

// eraWant is what one source of a case measures.
type eraWant struct {
	handshake   string // the first request: initialize or server/discover
	negotiated  string // the protocol version the session speaks
	sessionID   bool   // over HTTP: the server assigned an Mcp-Session-Id
	listChanged bool   // the source hears tools/list_changed
}

// eras are the protocol_version settings of the sources: unset (the
// default), the legacy era and the stateless era.
var eras = []string{"", legacyEra, statelessEra}

// eraSources are the connection ids of the sources, by setting.
var eraSources = map[string]string{"": "unpinned.default", legacyEra: "legacy.default", statelessEra: "stateless.default"}

// eraCases are the server setups: stdio, where each source runs its own
// server process, and streamable HTTP, where the sources share one
// server, stateless (the server's default) or stateful.
var eraCases = []eraCase{
	{name: "stdio", transport: config.TransportStdio, want: map[string]eraWant{
		"":           {handshake: "initialize", negotiated: legacyEra, listChanged: true},
		legacyEra:    {handshake: "initialize", negotiated: legacyEra, listChanged: true},
		statelessEra: {handshake: "server/discover", negotiated: statelessEra, listChanged: true},
	}},
	{name: "http-stateless", transport: config.TransportHTTP, stateless: true, want: map[string]eraWant{
		// A legacy session on a stateless server: no session, and no
		// stream to hear notifications on (the GET is answered 405).
		"":           {handshake: "initialize", negotiated: legacyEra},
		legacyEra:    {handshake: "initialize", negotiated: legacyEra},
		statelessEra: {handshake: "server/discover", negotiated: statelessEra, listChanged: true},
	}},
	{name: "http-stateful", transport: config.TransportHTTP, want: map[string]eraWant{
		"":        {handshake: "initialize", negotiated: legacyEra, sessionID: true, listChanged: true},
		legacyEra: {handshake: "initialize", negotiated: legacyEra, sessionID: true, listChanged: true},
		// A stateful server supports no 2026-07-28: server/discover
		// offers only the legacy versions, and the client falls back to
		// initialize with 2025-11-25.
		statelessEra: {handshake: "server/discover", negotiated: legacyEra, sessionID: true, listChanged: true},
	}},
}

// eraSetup starts the case's server (over HTTP) and mcpflow with one
// source per setting, recording on the returned wire; keepAlive is the
// sessions' keepalive interval (0: none).
func eraSetup(t *testing.T, tc eraCase, keepAlive time.Duration) (*client.Client, *wire, *eraUpstream) {
	t.Helper()
	bin := conformanceBinary(t)
	w := &wire{}
	var sources []config.Connection
	for _, era := range eras {
		id := eraSources[era]
		var src config.Connection
		if tc.transport == config.TransportStdio {
			src = stdioSource(id, bin)
		} else {
			src = config.Connection{Kind: "mcp", ID: id, Transport: config.Transport{Kind: config.TransportHTTP}}
		}
		src.Transport.ProtocolVersion = era
		sources = append(sources, src)
	}
	var up *eraUpstream
	if tc.transport == config.TransportHTTP {
		up = startConformanceHTTP(t, bin, freeAddr(t), tc.stateless)
		for i := range sources {
			// The path names the source for the wire recorder; the
			// server answers MCP on every path.
			sources[i].Transport.URL = "http://" + up.addr + "/" + sources[i].ID
		}
	}
	svc := startEraService(t, w, keepAlive, sources...)
	return svc.dial(t), w, up
}

// eraText is a run's output for a tool's single text content.
func eraText(text string) p.Object {
	return p.Object{"content": []any{map[string]any{"type": "text", "text": text}}}
}

// eraName names a source's deployment of a tool.
func eraName(id, what string) string { return strings.ReplaceAll(id, ".", "_") + "_" + what }

// TestErasAgainstConformanceServer checks, for each setup and source: the
// catalog lists, workflow runs call a tool, the session stays the one
// opened, the handshake and the negotiated version, what every request
// carries, the server session (over HTTP), and whether the source hears
// tools/list_changed. With -v it logs the figures docs/protocol-eras.md
// reports.
func TestErasAgainstConformanceServer(t *testing.T) {
	for _, tc := range eraCases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			c, w, _ := eraSetup(t, tc, 0) // keepalive: TestErasKeepalive
			ctx := testContext(t)

			for _, era := range eras {
				id, want := eraSources[era], tc.want[era]
				refreshed, err := c.RefreshConnectionCatalog(ctx, id)
				is.NoErr(err)                                   // the catalog lists
				is.Equal(refreshed.NodeCount, conformanceTools) // every tool listed

				const runs = 20
				dep := buildToolDeployment(t, c, id, "test_simple_text", eraName(id, "text"))
				var took []time.Duration
				for range runs {
					began := time.Now()
					run := runCompleted(t, c, dep, p.Object{})
					took = append(took, time.Since(began))
					is.Equal(run.Output, eraText(simpleText)) // the tool's text
				}
				st := eraStatus(t, c, id)
				is.Equal(st.Session.State, "open")
				is.Equal(st.Session.Generation, int64(1))
				is.Equal(st.Session.SessionsOpened, 1) // one session served the refresh and every run
				is.Equal(st.Session.LastError, (*string)(nil))

				// The handshake and the version the session speaks.
				msgs := w.messages(id)
				is.True(len(msgs) > 0)                   // the session's messages were recorded
				is.Equal(msgs[0].method, want.handshake) // the first request
				connect := w.connectTime(id)
				if want.handshake == "server/discover" {
					_, resps := w.responses(id, "server/discover")
					is.Equal(len(resps), 1) // discover answered
					t.Logf("%s %s: server/discover answered %s", tc.name, id, resps[0].result)
				}
				negotiated := w.negotiated(id)
				is.Equal(negotiated, want.negotiated)
				calls, resps := w.responses(id, "tools/call")
				is.Equal(len(calls), runs) // every call answered
				var wireTook []time.Duration
				for i, call := range calls {
					wireTook = append(wireTook, resps[i].at.Sub(call.at))
					if negotiated == statelessEra {
						is.Equal(call.metaVersion(), statelessEra) // a stateless-era request names its version
					} else {
						is.Equal(call.metaVersion(), "") // a session's request carries no _meta
					}
				}
				if tc.transport == config.TransportHTTP {
					ids := w.sessionIDs(id)
					if want.sessionID {
						is.Equal(len(ids), 1) // one server session for every request
					} else {
						is.Equal(len(ids), 0) // no server session
					}
					if negotiated == legacyEra {
						// The legacy era opens the standalone GET stream
						// for server notifications; a stateless server
						// has none.
						wantGET := http.StatusOK
						if tc.stateless {
							wantGET = http.StatusMethodNotAllowed
						}
						is.Equal(w.statuses(id, http.MethodGet), []int{wantGET})
					}
					t.Logf("%s %s: Mcp-Session-Id values %v; HTTP exchanges %v", tc.name, id, ids, w.exchangeSummary(id))
				}
				t.Logf("%s %s (protocol_version %q): handshake %s, negotiated %s, connect %v; tools/call request %d bytes; p50 of %d tools/call on the wire %v, of the runs through mcpflow %v",
					tc.name, id, era, want.handshake, negotiated, connect, calls[0].size, runs, eraP50(wireTook), eraP50(took))
			}

			// tools/list_changed: each source calls the tool that
			// re-registers a tool; a source that hears the notification
			// re-lists its catalog, which gains that tool.
			for _, era := range eras {
				id, want := eraSources[era], tc.want[era]
				dep := buildToolDeployment(t, c, id, "test_trigger_tool_change", eraName(id, "trigger"))
				before := len(w.notifications(id, toolsChanged))
				run := runCompleted(t, c, dep, p.Object{})
				is.Equal(run.Output, eraText("tools_list_changed published"))
				if !want.listChanged {
					continue
				}
				poll.For(t, id+" hears tools/list_changed", settleWait, func() bool { return len(w.notifications(id, toolsChanged)) > before })
				poll.For(t, id+" re-lists its catalog", settleWait, func() bool { return eraStatus(t, c, id).NodeCount == conformanceTools+1 })
				_, err := c.InspectCapability(ctx, id+"."+transientTool)
				is.NoErr(err) // the re-listed catalog has the new tool
			}
			for _, era := range eras {
				id, want := eraSources[era], tc.want[era]
				heard := len(w.notifications(id, toolsChanged))
				if !want.listChanged {
					// Every other source has heard its notifications by
					// now; this one has no stream they could come on.
					is.Equal(heard, 0) // a legacy session on a stateless server hears no notification
				}
				t.Logf("%s %s: sent %v; tools/list_changed heard %d, catalog %d tools",
					tc.name, id, w.methodCounts(id), heard, eraStatus(t, c, id).NodeCount)
			}
		})
	}
}

// toolsChanged is the notification a server sends when its tools change.
const toolsChanged = "notifications/tools/list_changed"

// TestErasKeepalive runs the sessions with a 100 ms keepalive: the legacy
// sessions answer mcpflow's pings, and no session of either era is
// dropped for the keepalive. (ping is removed from the stateless era:
// go-sdk v1.8.0 sends it without _meta, and a stateless HTTP server
// refuses it with 400.)
func TestErasKeepalive(t *testing.T) {
	for _, tc := range eraCases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			c, w, _ := eraSetup(t, tc, 100*time.Millisecond)
			// The legacy session's answered pings time the test: five of
			// them span five keepalive intervals.
			legacy := eraSources[legacyEra]
			poll.For(t, legacy+" answers five pings", settleWait, func() bool { return len(w.answered(legacy, "ping")) >= 5 })
			for _, era := range eras {
				id := eraSources[era]
				st := eraStatus(t, c, id)
				t.Logf("%s %s: pings sent %d, answered %d, failed %d; session %s, generation %d, opened %d, last error %v",
					tc.name, id, len(w.requests(id, "ping")), len(w.answered(id, "ping")), len(w.failed(id, "ping")),
					st.Session.State, st.Session.Generation, st.Session.SessionsOpened, deref(st.Session.LastError))
				is.Equal(st.Session.State, "open")
				is.Equal(st.Session.SessionsOpened, 1) // keepalive dropped no session
				if w.negotiated(id) == legacyEra {
					is.True(len(w.answered(id, "ping")) >= 1) // the legacy session answers pings
				}
			}
		})
	}
}

// TestErasUpstreamRestart restarts the HTTP server between two runs of
// each source. A server session does not survive it: a stateful server
// answers the old session id 404, mcpflow replays the call on a new
// session (generation 2) and the run completes. A stateless server had no
// session to lose: the same session (generation 1) goes on. But the
// stateless era's subscriptions/listen stream died with the server and
// go-sdk v1.8.0 does not reopen it: that source hears no more
// tools/list_changed until its session is reopened.
func TestErasUpstreamRestart(t *testing.T) {
	for _, tc := range eraCases {
		if tc.transport != config.TransportHTTP {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			c, w, up := eraSetup(t, tc, 0)
			deps := map[string]string{}
			for _, era := range eras {
				id := eraSources[era]
				deps[id] = buildToolDeployment(t, c, id, "test_simple_text", eraName(id, "text"))
				is.Equal(runCompleted(t, c, deps[id], p.Object{}).Output, eraText(simpleText))
			}
			listens := len(w.requests(eraSources[statelessEra], "subscriptions/listen"))

			up.stop(t)
			startConformanceHTTP(t, conformanceBinary(t), up.addr, tc.stateless)
			for _, era := range eras {
				id, want := eraSources[era], tc.want[era]
				began := time.Now()
				run := runCompleted(t, c, deps[id], p.Object{})
				is.Equal(run.Output, eraText(simpleText)) // the run after the restart completes
				took := time.Since(began)
				st := eraStatus(t, c, id)
				if want.sessionID {
					poll.For(t, id+" reopens its session", settleWait, func() bool {
						st = eraStatus(t, c, id)
						return st.Session.State == "open" && st.Session.Generation >= 2
					})
					is.Equal(st.Session.SessionsOpened, int(st.Session.Generation)) // a new server session
					is.Equal(len(w.sessionIDs(id)), 2)                              // with a new Mcp-Session-Id
					is.True(st.Session.LastError != nil)                            // the lost session is noted
					// Whichever request of the old session met the new
					// server first was answered 404: the run's call (then
					// replayed on a new session) or the GET stream's
					// reconnect (the session ends; the run waits for the
					// next).
					t.Logf("%s %s: POST statuses %v, GET statuses %v", tc.name, id, w.statuses(id, http.MethodPost), w.statuses(id, http.MethodGet))
				} else {
					is.Equal(st.Session.Generation, int64(1)) // the same session goes on
					is.Equal(st.Session.SessionsOpened, 1)
					is.Equal(len(w.sessionIDs(id)), 0)
				}
				t.Logf("%s %s: run after the restart took %v; session generation %d, opened %d, last error %v",
					tc.name, id, took.Round(time.Millisecond), st.Session.Generation, st.Session.SessionsOpened, deref(st.Session.LastError))
			}
			if tc.stateless {
				id := eraSources[statelessEra]
				is.Equal(w.negotiated(id), statelessEra)
				is.Equal(len(w.requests(id, "subscriptions/listen")), listens) // the listen stream was not reopened
			}
		})
	}
}

// startEraService starts mcpflow in-process, as startService does, with
// the real stdio and HTTP transports recording on w, and the given
// keepalive interval.
func startEraService(t *testing.T, w *wire, keepAlive time.Duration, sources ...config.Connection) *service {
	t.Helper()
	return startServiceTuned(t, func(opts *app.Options) {
		opts.Supervisor.Session.KeepAlive = keepAlive
		opts.Transports = session.Factories{
			config.TransportStdio: recordingFactory{inner: session.NewStdio(opts.Supervisor.Session, nil), w: w},
			config.TransportHTTP:  session.HTTP{Client: &http.Client{Transport: w}},
		}
	}, sources...)
}

// eraStatus returns the status of connection id.
func eraStatus(t *testing.T, c *client.Client, id string) p.ConnectionStatus {
	t.Helper()
	is := is.New(t)
	is.Helper()
	statuses, err := c.GetConnectionStatuses(testContext(t))
	is.NoErr(err)
	for _, st := range statuses.Statuses {
		if st.ConnectionID == id {
			return st
		}
	}
	t.Logf("no status for %s in %+v", id, statuses.Statuses)
	is.Fail() // the connection has a status
	return p.ConnectionStatus{}
}

// eraP50 is the median of ds.
func eraP50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Microsecond)
}

// eraUpstream is a conformance everything-server over streamable HTTP.
type eraUpstream struct {
	addr   string
	cmd    *exec.Cmd
	exited chan error
}

// startConformanceHTTP starts the conformance server on addr, stateless
// or not, and returns once it accepts connections. The cleanup kills it.
func startConformanceHTTP(t *testing.T, bin, addr string, stateless bool) *eraUpstream {
	t.Helper()
	is := is.New(t)
	is.Helper()
	logPath := filepath.Join(t.TempDir(), "conformance-server.log")
	out, err := os.Create(logPath)
	is.NoErr(err)
	defer out.Close()
	cmd := exec.Command(bin, "-http", addr, fmt.Sprintf("-stateless=%t", stateless))
	cmd.Stdout, cmd.Stderr = out, out
	is.NoErr(cmd.Start()) // start the conformance server
	u := &eraUpstream{addr: addr, cmd: cmd, exited: make(chan error, 1)}
	go func() { u.exited <- cmd.Wait() }()
	t.Cleanup(func() { u.stop(t) })

	awaitAccepting(t, "the conformance server", addr, 10*time.Second, func() (bool, string) {
		logs, _ := os.ReadFile(logPath)
		select {
		case err := <-u.exited:
			u.exited <- err // for stop
			return true, fmt.Sprintf("%v\n%s", err, logs)
		default:
			return false, string(logs)
		}
	})
	return u
}

// stop kills the server and waits for it to exit; it may run twice.
func (u *eraUpstream) stop(t *testing.T) {
	t.Helper()
	_ = u.cmd.Process.Kill()
	select {
	case err := <-u.exited:
		u.exited <- err
	case <-time.After(10 * time.Second):
		t.Logf("conformance server (pid %d) did not exit after SIGKILL", u.cmd.Process.Pid)
		is.NewRelaxed(t).Fail() // the conformance server exits after SIGKILL
	}
}

// wire records the JSON-RPC messages of every source's sessions: over
// stdio from the connection, over HTTP from the requests and responses
// (the URL path names the source), with each HTTP exchange's headers.
type wire struct {
	mu        sync.Mutex
	msgs      []wireMsg
	exchanges []httpExchange
}

// wireMsg is one JSON-RPC message.
type wireMsg struct {
	source string
	out    bool // sent by mcpflow
	at     time.Time
	size   int
	method string          // a request's or notification's
	id     string          // a request's or response's id, as JSON
	params json.RawMessage // a request's or notification's
	result json.RawMessage // a response's
	err    json.RawMessage // an error response's
}

// httpExchange is one HTTP request of a source and its answer.
type httpExchange struct {
	source      string
	method      string // GET, POST, DELETE
	rpc         string // the JSON-RPC method(s) it posted
	status      int
	reqSession  string // Mcp-Session-Id sent
	respSession string // Mcp-Session-Id answered
	version     string // Mcp-Protocol-Version sent
}

// metaVersion is the protocolVersion a request's params._meta carries.
func (m wireMsg) metaVersion() string {
	var params struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(m.params, &params)
	for k, v := range params.Meta {
		if strings.HasSuffix(k, "protocolVersion") {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

// record adds the messages of one frame (a message or a batch).
func (w *wire) record(source string, out bool, data []byte) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return
	}
	var frames []json.RawMessage
	if data[0] == '[' {
		_ = json.Unmarshal(data, &frames)
	} else {
		frames = []json.RawMessage{data}
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range frames {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(f, &m) != nil {
			continue
		}
		w.msgs = append(w.msgs, wireMsg{source: source, out: out, at: now, size: len(f), method: m.Method,
			id: string(m.ID), params: m.Params, result: m.Result, err: m.Error})
	}
}

func (w *wire) messages(source string) []wireMsg {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []wireMsg
	for _, m := range w.msgs {
		if m.source == source {
			out = append(out, m)
		}
	}
	return out
}

// requests are the requests source sent with method.
func (w *wire) requests(source, method string) []wireMsg {
	var out []wireMsg
	for _, m := range w.messages(source) {
		if m.out && m.method == method && m.id != "" {
			out = append(out, m)
		}
	}
	return out
}

// responses pairs each request of method with its response, if any.
func (w *wire) responses(source, method string) (reqs, resps []wireMsg) {
	msgs := w.messages(source)
	for _, req := range msgs {
		if !req.out || req.method != method || req.id == "" {
			continue
		}
		for _, resp := range msgs {
			if !resp.out && resp.method == "" && resp.id == req.id && !resp.at.Before(req.at) {
				reqs, resps = append(reqs, req), append(resps, resp)
				break
			}
		}
	}
	return reqs, resps
}

// answered are the successful responses to source's requests of method.
func (w *wire) answered(source, method string) []wireMsg {
	var out []wireMsg
	_, resps := w.responses(source, method)
	for _, r := range resps {
		if r.err == nil {
			out = append(out, r)
		}
	}
	return out
}

// failed are the error responses to source's requests of method.
func (w *wire) failed(source, method string) []wireMsg {
	var out []wireMsg
	_, resps := w.responses(source, method)
	for _, r := range resps {
		if r.err != nil {
			out = append(out, r)
		}
	}
	return out
}

// notifications are the notifications of method source received.
func (w *wire) notifications(source, method string) []wireMsg {
	var out []wireMsg
	for _, m := range w.messages(source) {
		if !m.out && m.method == method && m.id == "" {
			out = append(out, m)
		}
	}
	return out
}

// negotiated is the protocol version source's session speaks: the one
// the initialize result names, or, after server/discover, the one its
// later requests carry.
func (w *wire) negotiated(source string) string {
	for _, r := range w.answered(source, "initialize") {
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(r.result, &res)
		return res.ProtocolVersion
	}
	for _, r := range w.requests(source, "tools/list") {
		return r.metaVersion()
	}
	return ""
}

// methodCounts counts the requests and notifications source sent, by
// method.
func (w *wire) methodCounts(source string) map[string]int {
	counts := map[string]int{}
	for _, m := range w.messages(source) {
		if m.out && m.method != "" {
			counts[m.method]++
		}
	}
	return counts
}

// sessionIDs are the distinct Mcp-Session-Id values source's exchanges
// carried.
func (w *wire) sessionIDs(source string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ids []string
	for _, x := range w.exchanges {
		for _, id := range []string{x.reqSession, x.respSession} {
			if x.source == source && id != "" && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// statuses are the HTTP statuses of source's exchanges of method (GET,
// POST), in order.
func (w *wire) statuses(source, method string) []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []int
	for _, x := range w.exchanges {
		if x.source == source && x.method == method {
			out = append(out, x.status)
		}
	}
	return out
}

// connectTime is how long source's first session took from its first
// handshake message to its first request after the handshake.
func (w *wire) connectTime(source string) time.Duration {
	msgs := w.messages(source)
	for _, m := range msgs {
		switch m.method {
		case "", "initialize", "notifications/initialized", "server/discover", "subscriptions/listen":
			continue
		}
		if m.out {
			return m.at.Sub(msgs[0].at).Round(time.Microsecond)
		}
	}
	return 0
}

// exchangeSummary counts source's HTTP exchanges by method, JSON-RPC
// method and status.
func (w *wire) exchangeSummary(source string) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	counts := map[string]int{}
	for _, x := range w.exchanges {
		if x.source == source {
			counts[fmt.Sprintf("%s %s %d %s", x.method, x.rpc, x.status, x.version)]++
		}
	}
	return counts
}

// RoundTrip records an HTTP exchange of the source its URL path names,
// and the JSON-RPC messages of its request and of its answer (a JSON
// body or an event stream, as it is read).
func (w *wire) RoundTrip(r *http.Request) (*http.Response, error) {
	source := strings.TrimPrefix(r.URL.Path, "/")
	x := httpExchange{source: source, method: r.Method, reqSession: r.Header.Get("Mcp-Session-Id"), version: r.Header.Get("Mcp-Protocol-Version")}
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			return nil, err
		}
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		w.record(source, true, body)
		var one struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &one) == nil {
			x.rpc = one.Method
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	x.status, x.respSession = resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	w.mu.Lock()
	w.exchanges = append(w.exchanges, x)
	w.mu.Unlock()
	sse := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	resp.Body = &bodyTap{ReadCloser: resp.Body, sse: sse, record: func(data []byte) { w.record(source, false, data) }}
	return resp, nil
}

// bodyTap records the messages of a response body as it is read: each
// event's data of an event stream, or the whole of a JSON body.
type bodyTap struct {
	io.ReadCloser
	sse    bool
	record func([]byte)

	mu   sync.Mutex
	buf  []byte // unprocessed bytes
	data []byte // the current event's data
	done bool
}

func (b *bodyTap) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p[:n]...)
	if b.sse {
		for {
			i := bytes.IndexByte(b.buf, '\n')
			if i < 0 {
				break
			}
			line := strings.TrimSuffix(string(b.buf[:i]), "\r")
			b.buf = b.buf[i+1:]
			switch {
			case line == "":
				b.record(b.data)
				b.data = nil
			case strings.HasPrefix(line, "data:"):
				b.data = append(b.data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
			}
		}
	} else if err != nil {
		b.flush()
	}
	return n, err
}

func (b *bodyTap) Close() error {
	b.mu.Lock()
	if !b.sse {
		b.flush()
	}
	b.mu.Unlock()
	return b.ReadCloser.Close()
}

// flush records a JSON body once.
func (b *bodyTap) flush() {
	if !b.done {
		b.done = true
		b.record(b.buf)
	}
}

// recordingFactory wraps a stdio factory's transports so that their
// connections record on w.
type recordingFactory struct {
	inner session.TransportFactory
	w     *wire
}

func (f recordingFactory) NewTransport(conn config.Connection) (mcp.Transport, error) {
	t, err := f.inner.NewTransport(conn)
	if err != nil {
		return nil, err
	}
	return &recordingTransport{Transport: t, source: conn.ID, w: f.w}, nil
}

// recordingTransport keeps its transport's Killer.
type recordingTransport struct {
	mcp.Transport
	source string
	w      *wire
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, source: t.source, w: t.w}, nil
}

func (t *recordingTransport) Kill() error {
	if k, ok := t.Transport.(session.Killer); ok {
		return k.Kill()
	}
	return nil
}

type recordingConn struct {
	mcp.Connection
	source string
	w      *wire
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		if data, err := jsonrpc.EncodeMessage(m); err == nil {
			c.w.record(c.source, false, data)
		}
	}
	return m, err
}

func (c *recordingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if data, err := jsonrpc.EncodeMessage(m); err == nil {
		c.w.record(c.source, true, data)
	}
	return c.Connection.Write(ctx, m)
}
