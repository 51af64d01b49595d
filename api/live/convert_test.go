package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// runEventGolden is the JSON of each representative run event's
// notification while api/protocol embedded store.RunEvent (captured from
// that code, unescaped as notifications are encoded). The API's own
// RunEvent must keep it byte for byte.
var runEventGolden = map[string]string{
	"run_event_0": `{"subscription_id":"s1","run_id":"r1","sequence":1,"kind":"status","timestamp_epoch_ms":10,"status":{"status":"running","terminal":false,"trace_count":0}}`,
	"run_event_1": `{"subscription_id":"s1","run_id":"r1","sequence":2,"kind":"step_started","timestamp_epoch_ms":11,"step":{"frame_id":"root","node_id":"call","call_id":"c1","capability":"src.tool"}}`,
	"run_event_2": `{"subscription_id":"s1","run_id":"r1","sequence":3,"kind":"step_finished","timestamp_epoch_ms":12,"step":{"frame_id":"root","node_id":"call","trace_index":0,"step_type":"node","outcome":"ok","next_node_id":"ask","state_changes":["answer"],"attempts":1,"error":"x<y"}}`,
	"run_event_3": `{"subscription_id":"s1","run_id":"r1","sequence":4,"kind":"interrupted","timestamp_epoch_ms":13,"interrupt":{"id":"i1","frame_id":"f","node_id":"ask","kind":"approval","payload":{"why":"because"},"resumable":true,"route":{"frame_id":"f","node_id":"sub","scope_id":"s","lineage_id":"l","parent_frame_id":"p","workflow_ref":{"artifact_id":"child","version":2}},"outcomes":["submitted"],"request_schema":{"type":"object"},"resume_schema":null,"typed":true}}`,
	"run_event_4": `{"subscription_id":"s1","run_id":"r1","sequence":5,"kind":"status","timestamp_epoch_ms":14,"status":{"status":"completed","terminal":true,"outcome":"ok","error":"none","output":{"answer":"x"},"trace_count":2}}`,
}

func TestTheAPIsRunEventMarshalsAsTheStoresDid(t *testing.T) {
	is := is.New(t)
	events := goldenRunEvents()
	is.Equal(len(events), len(runEventGolden)) // every golden case is checked
	for i, e := range events {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		is.NoErr(enc.Encode(protocol.RunEventNotification{SubscriptionID: "s1", RunEvent: runEvent(e)}))
		is.Equal(string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), runEventGolden[fmt.Sprintf("run_event_%d", i)]) // the notification's bytes
	}
}

func ptr[T any](v T) *T { return &v }

// goldenRunEvents are one event of each kind, every field set somewhere.
func goldenRunEvents() []store.RunEvent {
	return []store.RunEvent{
		{RunID: "r1", Seq: 1, Kind: store.RunEventStatusChanged, TimestampEpochMs: 10, Status: &store.RunEventStatus{Status: "running", TraceCount: 0}},
		{RunID: "r1", Seq: 2, Kind: store.RunEventStepStarted, TimestampEpochMs: 11, Step: &store.RunEventStep{FrameID: "root", NodeID: "call", CallID: "c1", Capability: "src.tool"}},
		{RunID: "r1", Seq: 3, Kind: store.RunEventStepFinished, TimestampEpochMs: 12, Step: &store.RunEventStep{FrameID: "root", NodeID: "call", TraceIndex: ptr(0), StepType: "node", Outcome: "ok", NextNodeID: "ask", StateChanges: []string{"answer"}, Attempts: 1, Error: "x<y"}},
		{RunID: "r1", Seq: 4, Kind: store.RunEventInterrupted, TimestampEpochMs: 13, Interrupt: &workflow.Interrupt{ID: "i1", FrameID: "f", NodeID: "ask", Kind: "approval", Payload: workflow.Object{"why": "because"}, Resumable: true,
			Route:    &workflow.InterruptRoute{FrameID: "f", NodeID: "sub", ScopeID: "s", LineageID: "l", ParentFrameID: "p", WorkflowRef: workflow.WorkflowRef{ArtifactID: ptr("child"), Version: ptr(2)}},
			Outcomes: []string{"submitted"}, RequestSchema: workflow.Object{"type": "object"}, ResumeSchema: nil, Typed: true}},
		{RunID: "r1", Seq: 5, Kind: store.RunEventStatusChanged, TimestampEpochMs: 14, Status: &store.RunEventStatus{Status: "completed", Terminal: true, Outcome: ptr("ok"), Error: ptr("none"), Output: workflow.Object{"answer": "x"}, TraceCount: 2}},
	}
}
