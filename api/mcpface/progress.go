package mcpface

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// progress reports a run's steps to a client that sent a progressToken:
// each step started or finished is a notification ("node: capability →
// outcome"), so is each progress the step's upstream reported
// (step_progress: "node: capability → 2/5 message"), and while a step
// runs a heartbeat goes out at least every heartbeat, so that a host does
// not give up on a long call (Claude Code does after about 300 s of
// silence). The notification's own progress is the run's (steps
// finished, and a growing fraction between two): an upstream's counts are
// its call's, and would not grow across the run's steps.
type progress struct {
	req      *mcp.CallToolRequest
	token    any
	total    int
	finished int // steps finished
	since    int // notifications since the last step finished
	interval time.Duration
	timer    *time.Timer
	last     string
	// calls names the capability each started step calls, for its finish.
	calls map[string]string
}

// maxProgressMessage is the longest message sent (hosts show 200).
const maxProgressMessage = 200

// newProgress returns the progress of one tool call; a call without a
// progressToken reports nothing.
func newProgress(req *mcp.CallToolRequest, total int, heartbeat time.Duration) *progress {
	p := &progress{req: req, total: total, interval: heartbeat}
	if req != nil && req.Params != nil {
		p.token = req.Params.GetProgressToken()
	}
	return p
}

// beat fires when a heartbeat is due; never without a progressToken.
func (p *progress) beat() <-chan time.Time {
	if p.token == nil {
		return nil
	}
	if p.timer == nil {
		p.timer = time.NewTimer(p.interval)
	}
	return p.timer.C
}

// event reports a step started or finished, or its upstream's progress.
func (p *progress) event(ctx context.Context, e protocol.RunEvent) {
	if msg, ok := p.message(e); ok {
		p.last = msg
		p.send(ctx, msg)
	}
}

// message is what e reports, if it is a step started or finished or its
// upstream's progress, and counts a finished step.
func (p *progress) message(e protocol.RunEvent) (string, bool) {
	if e.Step == nil {
		return "", false
	}
	step := e.Step
	key := step.FrameID + "/" + step.NodeID
	switch e.Kind {
	case "step_started", "step_finished":
	case "step_progress":
		return p.upstream(step.NodeID, p.calls[key], e.Progress)
	default:
		return "", false // a step's log: not progress
	}
	what := step.Capability
	if what != "" {
		if p.calls == nil {
			p.calls = map[string]string{}
		}
		p.calls[key] = what
	} else if what = p.calls[key]; what == "" {
		what = step.StepType
	}
	if e.Kind == "step_finished" {
		p.finished, p.since = p.finished+1, 0
		return fmt.Sprintf("%s: %s → %s", step.NodeID, what, step.Outcome), true
	}
	return fmt.Sprintf("%s: %s → started", step.NodeID, what), true
}

// upstream is the message of a progress the upstream of node's call
// (capability what) sent: "node: what → 2/5 message".
func (p *progress) upstream(node, what string, up *protocol.RunEventProgress) (string, bool) {
	if up == nil {
		return "", false
	}
	if what == "" {
		what = "call"
	}
	msg := fmt.Sprintf("%s: %s → %g", node, what, up.Progress)
	if up.Total != nil {
		msg += fmt.Sprintf("/%g", *up.Total)
	}
	if up.Message != "" {
		msg += " " + up.Message
	}
	return msg, true
}

// heartbeat says the run still runs.
func (p *progress) heartbeat(ctx context.Context) {
	p.send(ctx, "still running; last: "+p.last)
}

// stop stops the heartbeat.
func (p *progress) stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}

// next is the value of the next notification. It must grow with every
// notification: a finished step counts one, and what comes between two
// (starts, heartbeats) a growing fraction of the next.
func (p *progress) next() float64 {
	p.since++
	return float64(p.finished) + float64(p.since)/float64(p.since+1)
}

func (p *progress) send(ctx context.Context, msg string) {
	if p.token == nil {
		return
	}
	if len(msg) > maxProgressMessage {
		cut := maxProgressMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut]
	}
	params := &mcp.ProgressNotificationParams{ProgressToken: p.token, Message: msg, Progress: p.next()}
	if p.total > 0 {
		params.Total = float64(max(p.total, p.finished+1))
	}
	// The handler's ctx: the notification rides the request's stream.
	_ = p.req.Session.NotifyProgress(ctx, params)
	if p.timer != nil {
		p.timer.Reset(p.interval)
	}
}
