package integration

// Tests that drive mcpflow's JSON-RPC 2.0 over WebSocket edge with
// third-party client stacks rather than our Go client:
//
//   - npm json-rpc-2.0 (JSONRPCClient) over npm ws, from the Node script
//     testdata/wsclient.mjs, installed under the prefix $MCPFLOW_PEERS
//     (default <module root>/.peers) like the npm MCP peers.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// Pinned versions of the npm WebSocket JSON-RPC client stack.
const (
	jsonRPCPackage = "json-rpc-2.0"
	jsonRPCVersion = "1.8.1"
	wsPackage      = "ws"
	wsMajor        = "8."
)

// nodeWebSocketClient returns the node executable and the install prefix
// holding json-rpc-2.0 and ws, or skips (fails in CI) when one is missing
// or is not the pinned version.
func nodeWebSocketClient(t *testing.T) (node, prefix string) {
	t.Helper()
	return nodePeers(t, pinnedPeer{jsonRPCPackage, jsonRPCVersion}, pinnedPeer{wsPackage, wsMajor})
}

// pinnedPeer is an npm package of the install prefix and the version it
// must have (a prefix of it, such as "8.").
type pinnedPeer struct{ pkg, version string }

// nodePeers returns the node executable and the install prefix holding
// the packages at their pinned versions, or skips (fails in CI) when node
// or one of them is missing or of another version.
func nodePeers(t *testing.T, want ...pinnedPeer) (node, prefix string) {
	t.Helper()
	specs := make([]string, len(want))
	for i, w := range want {
		specs[i] = w.pkg + "@" + strings.TrimSuffix(w.version, ".")
	}
	install := fmt.Sprintf("install them from the module root with: npm install --prefix .peers --no-audit --no-fund %s (or set MCPFLOW_PEERS to another install prefix)", strings.Join(specs, " "))
	node, err := exec.LookPath("node")
	if err != nil {
		missingPeer(t, "node is not on PATH; the test needs Node.js >= 20; then %s", install)
	}
	prefix = peersPrefix(t)
	for _, w := range want {
		manifest := filepath.Join(prefix, "node_modules", filepath.FromSlash(w.pkg), "package.json")
		data, err := os.ReadFile(manifest)
		if err != nil {
			missingPeer(t, "%s not found at %s; %s", w.pkg, manifest, install)
		}
		var pkg struct{ Version string }
		if err := json.Unmarshal(data, &pkg); err != nil || !strings.HasPrefix(pkg.Version, w.version) {
			missingPeer(t, "%s at %s is version %q, want %s (%v); %s", w.pkg, manifest, pkg.Version, w.version, err, install)
		}
	}
	return node, prefix
}

// wsClientSummary is what testdata/wsclient.mjs prints.
type wsClientSummary struct {
	ListedBeforeRefresh bool `json:"listed_before_refresh"`
	Refresh             *struct {
		NodeCount int `json:"node_count"`
	} `json:"refresh"`
	Capabilities      []string `json:"capabilities"`
	CapabilitiesTotal int      `json:"capabilities_total"`
	Counter           *struct {
		SourceID     string   `json:"source_id"`
		Outcomes     []string `json:"outcomes"`
		OutputFields []string `json:"output_fields"`
	} `json:"counter"`
	Workspace struct {
		Status   string   `json:"status"`
		Revision int      `json:"revision"`
		Steps    []string `json:"steps"`
	} `json:"workspace"`
	Artifact struct {
		Saved                  bool              `json:"saved"`
		RequiredLogicalSources []string          `json:"required_logical_sources"`
		SuggestedBindings      map[string]string `json:"suggested_bindings"`
	} `json:"artifact"`
	Deployment struct {
		ID    string `json:"id"`
		Saved bool   `json:"saved"`
	} `json:"deployment"`
	Statuses   []string  `json:"statuses"`
	Outcomes   []string  `json:"outcomes"`
	Counts     []float64 `json:"counts"`
	TraceNodes []string  `json:"trace_nodes"`
	Session    *struct {
		State          string  `json:"state"`
		SessionsOpened int     `json:"sessions_opened"`
		LastError      *string `json:"last_error"`
	} `json:"session"`
	Batch []struct {
		Method   string         `json:"method"`
		Answered bool           `json:"answered"`
		Result   map[string]any `json:"result"`
		Code     *int           `json:"code"`
	} `json:"batch"`
	BatchAsOneArray   bool   `json:"batch_as_one_array"`
	StringIDEchoed    bool   `json:"string_id_echoed"`
	InvalidParamsCode *int   `json:"invalid_params_code"`
	InvalidParamsData any    `json:"invalid_params_data"`
	HealthAfterError  string `json:"health_after_error"`
	Live              struct {
		StartStatus  string `json:"start_status"`
		RunID        string `json:"run_id"`
		Subscription struct {
			Active bool   `json:"active"`
			RunID  string `json:"run_id"`
		} `json:"subscription"`
		Methods     []string              `json:"methods"`
		Ours        bool                  `json:"ours"`
		Sequences   []int64               `json:"sequences"`
		Kinds       []string              `json:"kinds"`
		FinalStatus *store.RunEventStatus `json:"final_status"`
	} `json:"live"`
	FramesReceived     int   `json:"frames_received"`
	UnmatchedFrames    []any `json:"unmatched_frames"`
	UnansweredRequests []any `json:"unanswered_ids"`
}

func TestThirdPartyWebSocketClientRunsTheWalkthrough(t *testing.T) {
	node, prefix := nodeWebSocketClient(t)
	is := is.New(t)
	script, err := filepath.Abs(filepath.Join("testdata", "wsclient.mjs"))
	is.NoErr(err) // the client script's path

	svc := startService(t, nil, stdioSource("demo.default", binary, "demo-server"))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, svc.URL)
	cmd.Env = append(os.Environ(), "MCPFLOW_PEERS="+prefix)
	cmd.WaitDelay = 5 * time.Second // bound the wait for the pipes after a kill
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	started := time.Now()
	err = cmd.Run()
	t.Logf("node %s took %s", filepath.Base(script), time.Since(started).Round(time.Millisecond))
	if err != nil || stderr.Len() > 0 {
		t.Logf("wsclient.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	is.NoErr(ctx.Err()) // the client finishes within 60 s
	is.NoErr(err)       // the client exits 0

	var got wsClientSummary
	dec := json.NewDecoder(&stdout)
	is.NoErr(dec.Decode(&got)) // stdout holds one summary object
	is.True(!dec.More())       // and nothing after it
	if !got.ListedBeforeRefresh {
		t.Log("the first capabilities.list ran before mcpflow's start-up catalog fetch finished; the client refreshed the catalog")
	}

	// capabilities.list
	listed := map[string]bool{}
	for _, name := range got.Capabilities {
		listed[name] = true
	}
	is.True(listed["demo.default.counter"]) // the counter tool is listed
	is.True(got.Counter != nil)
	is.Equal(got.Counter.SourceID, "demo.default")
	is.Equal(got.Counter.Outcomes, []string{"ok", "error"})
	is.Equal(got.Counter.OutputFields, []string{"count"})

	// create_from_capability, create_artifact, deployments.save
	is.Equal(got.Workspace.Status, "valid")
	is.Equal(got.Workspace.Revision, 1)
	is.Equal(got.Workspace.Steps, []string{"call", "tool_error"})
	is.True(got.Artifact.Saved)
	is.Equal(got.Artifact.RequiredLogicalSources, []string{"demo.default"})
	is.Equal(got.Artifact.SuggestedBindings, map[string]string{"demo.default": "demo.default"})
	is.Equal(got.Deployment.ID, "counter_workflow.default")
	is.True(got.Deployment.Saved)

	// runs.start twice on one upstream session
	is.Equal(got.Statuses, []string{"completed", "completed"})
	is.Equal(got.Outcomes, []string{"ok", "ok"})
	is.Equal(got.Counts, []float64{1, 2}) // one session: the count goes on
	is.Equal(got.TraceNodes, []string{"call"})
	is.True(got.Session != nil)
	is.Equal(got.Session.State, "open")
	is.Equal(got.Session.SessionsOpened, 1)

	// the batch [workflow.health, unknown method]
	is.True(got.BatchAsOneArray) // the batch is answered as one array
	is.Equal(len(got.Batch), 2)
	is.True(got.Batch[0].Answered)
	is.Equal(got.Batch[0].Method, "workflow.health")
	is.Equal(got.Batch[0].Code, (*int)(nil)) // health succeeds
	is.Equal(got.Batch[0].Result["status"], "ok")
	is.True(got.Batch[1].Answered)
	is.True(got.Batch[1].Code != nil)
	is.Equal(*got.Batch[1].Code, -32601) // Method not found

	// ids, bad params, notifications
	is.True(got.StringIDEchoed) // a string id comes back as that string
	is.True(got.InvalidParamsCode != nil)
	is.Equal(*got.InvalidParamsCode, -32602) // unknown param key
	is.True(strings.Contains(fmt.Sprint(got.InvalidParamsData), "oops"))
	is.Equal(got.HealthAfterError, "ok")     // the connection keeps working
	is.Equal(len(got.UnmatchedFrames), 0)    // no replies to notifications, no stray frames
	is.Equal(len(got.UnansweredRequests), 0) // every request was answered

	// A run started with wait: false and followed through a subscription:
	// its events numbered 1..N, no gap, the last one terminal.
	live := got.Live
	is.Equal(live.StartStatus, "running")
	is.True(live.Subscription.Active)
	is.Equal(live.Subscription.RunID, live.RunID)
	is.Equal(live.Methods, []string{p.NotifyRunEvent}) // events only, no lag
	is.True(live.Ours)                                 // of that subscription and run
	is.True(len(live.Sequences) >= 3)                  // running, the call's start and end, the end
	for i, seq := range live.Sequences {
		is.Equal(seq, int64(i+1)) // in order, no gap or duplicate
	}
	is.Equal(live.Kinds[0], store.RunEventStatusChanged)
	is.Equal(live.Kinds[len(live.Kinds)-1], store.RunEventStatusChanged)
	is.True(live.FinalStatus != nil)
	is.True(live.FinalStatus.Terminal)
	is.Equal(live.FinalStatus.Status, "completed")
	is.Equal(live.FinalStatus.Output["count"], float64(3)) // the third run on the session
	t.Logf("json-rpc-2.0 followed run %s through %d events %v: %v", live.RunID, len(live.Sequences), live.Sequences, live.Kinds)

	frames := 13 + len(live.Sequences) // 12 single replies, one batch array, one frame per event
	if got.Refresh != nil {
		frames += 2 // refresh_catalog and the second capabilities.list
	}
	is.Equal(got.FramesReceived, frames) // one frame per reply and event, none for the client's notifications
}
