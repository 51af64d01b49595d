package live

import (
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// runEvent is a run event as the API carries it (workflow.runs.event):
// the store's event log entry, converted field by field so that the log's
// on-disk form and the notification can change apart.
func runEvent(e store.RunEvent) protocol.RunEvent {
	out := protocol.RunEvent{RunID: e.RunID, Seq: e.Seq, Kind: e.Kind, TimestampEpochMs: e.TimestampEpochMs}
	if e.Step != nil {
		s := protocol.RunEventStep(*e.Step)
		out.Step = &s
	}
	if e.Status != nil {
		s := protocol.RunEventStatus(*e.Status)
		out.Status = &s
	}
	if e.Interrupt != nil {
		out.Interrupt = interrupt(*e.Interrupt)
	}
	if e.Progress != nil {
		p := protocol.RunEventProgress(*e.Progress)
		out.Progress = &p
	}
	if e.Log != nil {
		l := protocol.RunEventLog(*e.Log)
		out.Log = &l
	}
	if e.Session != nil {
		s := protocol.RunEventSession(*e.Session)
		out.Session = &s
	}
	return out
}

// interrupt converts where a run paused.
func interrupt(in workflow.Interrupt) *protocol.Interrupt {
	out := &protocol.Interrupt{
		ID: in.ID, FrameID: in.FrameID, NodeID: in.NodeID, Kind: in.Kind, Payload: in.Payload, Resumable: in.Resumable,
		Outcomes: in.Outcomes, RequestSchema: in.RequestSchema, ResumeSchema: in.ResumeSchema, Typed: in.Typed,
	}
	if r := in.Route; r != nil {
		out.Route = &protocol.InterruptRoute{
			FrameID: r.FrameID, NodeID: r.NodeID, ScopeID: r.ScopeID, LineageID: r.LineageID, ParentFrameID: r.ParentFrameID,
			WorkflowRef: protocol.WorkflowRef(r.WorkflowRef),
		}
	}
	return out
}
