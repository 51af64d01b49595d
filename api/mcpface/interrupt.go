package mcpface

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// An interrupt asks the human through the client, when the client
// declared elicitation and the interrupt's resume schema is a flat form:
// 2025-era sessions are asked with Elicit, once per interrupt, in a loop;
// 2026-era requests are answered input_required, with a signed
// requestState the client's retry brings back. Anything else gets the
// interrupted envelope, for the model to ask its user and resume with
// mcpflow_resume_run. The run stays resumable throughout: nothing here
// ends it.

// inputKey names the one input request of an input_required answer.
const inputKey = "interrupt"

// maxAsks bounds how often one call asks again after an answer the resume
// schema refused.
const maxAsks = 5

// rejections are the outcome names a declined elicitation resumes with,
// when the interrupt declares one.
var rejections = []string{"rejected", "declined", "denied", "reject", "decline", "deny"}

// pending is an interrupt as the face asks it.
type pending struct {
	runID    string
	id       string
	message  string
	schema   map[string]any // the form; nil where the resume schema is not flat
	outcomes []string
	// outcomeField is the form field that picks the outcome, "" when the
	// interrupt has one outcome.
	outcomeField string
}

// pendingOf reads an interrupted run's interrupt.
func pendingOf(r protocol.RunResult) pending {
	var in struct {
		ID           string          `json:"id"`
		NodeID       string          `json:"node_id"`
		Kind         string          `json:"kind"`
		Payload      protocol.Object `json:"payload"`
		Outcomes     []string        `json:"outcomes"`
		ResumeSchema protocol.Object `json:"resume_schema"`
	}
	raw, _ := json.Marshal(r.Interrupt)
	_ = json.Unmarshal(raw, &in)
	p := pending{id: in.ID, outcomes: in.Outcomes}
	if r.RunID != nil {
		p.runID = *r.RunID
	}
	p.message, _ = in.Payload["message"].(string)
	if p.message == "" {
		p.message = fmt.Sprintf("The workflow waits at step %q (%s) for your answer.", in.NodeID, in.Kind)
	}
	p.schema, p.outcomeField = formOf(in.ResumeSchema, in.Outcomes)
	return p
}

// formOf is a resume schema as an elicitation form, with an enum field
// for the outcome where there is more than one: nil where the schema is
// not flat (a property that is an object or an array), which a form
// cannot ask.
func formOf(resume protocol.Object, outcomes []string) (map[string]any, string) {
	props, _ := resume["properties"].(map[string]any) // none: a plain confirmation
	form := map[string]any{}
	for name, v := range props {
		p, ok := v.(map[string]any)
		if !ok || !primitive(p) {
			return nil, ""
		}
		form[name] = p
	}
	required, _ := resume["required"].([]any)
	field := ""
	if len(outcomes) > 1 {
		field = "outcome"
		if _, taken := form[field]; taken {
			field = "mcpflow_outcome"
		}
		enum := make([]any, len(outcomes))
		for i, o := range outcomes {
			enum[i] = o
		}
		form[field] = map[string]any{"type": "string", "title": "Outcome", "enum": enum, "default": outcomes[0]}
		required = append(slices.Clone(required), field)
	}
	schema := map[string]any{"type": "object", "properties": form}
	if len(required) > 0 {
		schema["required"] = required
	}
	return schema, field
}

// primitive reports whether a property schema is one a form can ask: a
// string, number, integer or boolean, or an enum of them.
func primitive(p map[string]any) bool {
	switch t := p["type"].(type) {
	case string:
		return t == "string" || t == "number" || t == "integer" || t == "boolean"
	case nil:
		_, enum := p["enum"]
		return enum
	}
	return false
}

// elicits reports whether the client of req declared elicitation (forms).
func elicits(req *mcp.CallToolRequest) bool {
	ip := req.Session.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil &&
		(ip.Capabilities.Elicitation.Form != nil || ip.Capabilities.Elicitation.URL == nil)
}

// modern reports whether req is of the 2026-07-28 era, where the server
// may not send requests of its own and answers input_required instead.
func modern(req *mcp.CallToolRequest) bool {
	ip := req.Session.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= "2026-07-28"
}

// interrupted answers a call whose run waits in an interrupt.
func (f *Face) interrupted(ctx context.Context, s *served, req *mcp.CallToolRequest, t workflowTool, r protocol.RunResult, cursor int64) (*mcp.CallToolResult, error) {
	e := envelopeOf(r)
	p := pendingOf(r)
	if p.schema == nil || !elicits(req) {
		return result(e, interruptedNote(e)), nil
	}
	if modern(req) {
		return f.inputRequired(s, p, cursor, "")
	}
	problem := ""
	for range maxAsks {
		answer, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: askMessage(p, problem), RequestedSchema: p.schema})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err() // the run stays interrupted
			}
			f.log.Info("mcp face: elicitation failed; answering the interrupted run", "run_id", p.runID, "err", err)
			return result(e, interruptedNote(e)), nil
		}
		var resumed bool
		if resumed, problem, err = f.answer(ctx, s, p, answer); err != nil {
			return nil, sdkError(err)
		}
		if resumed {
			return f.followRun(ctx, s, req, t, p.runID, cursor)
		}
		if problem == "" { // declined without a rejection outcome, or cancelled
			return result(e, interruptedNote(e)), nil
		}
	}
	return result(e, interruptedNote(e)+" (The form was refused "+fmt.Sprint(maxAsks)+" times: "+problem+")"), nil
}

// inputRequired is the 2026-era answer of an interrupt: one elicitation
// to fulfil, and the sealed state of the retry.
func (f *Face) inputRequired(s *served, p pending, cursor int64, problem string) (*mcp.CallToolResult, error) {
	st := requestState{Principal: s.who.Name, RunID: p.runID, Interrupt: p.id, Cursor: cursor, Expires: time.Now().Add(stateTTL).Unix(), Problem: problem}
	sealed, err := f.states.sign(st)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{inputKey: &mcp.ElicitParams{Mode: "form", Message: askMessage(p, problem), RequestedSchema: p.schema}},
		RequestState:  sealed,
	}, nil
}

// answerInterrupt serves a 2026-era retry: its state names the run and
// the interrupt, its input response answers it.
func (f *Face) answerInterrupt(ctx context.Context, s *served, req *mcp.CallToolRequest, t workflowTool) (*mcp.CallToolResult, error) {
	st, err := f.states.open(req.Params.RequestState, s.who.Name, time.Now())
	if err != nil {
		return nil, invalidParams(err)
	}
	var r protocol.RunResult
	if err := s.api.Call(ctx, protocol.MethodRunsInspect, protocol.RunIDParams{RunID: st.RunID}, &r); err != nil {
		return nil, sdkError(err)
	}
	if r.DeploymentID != t.deploymentID {
		return nil, invalidParams(fmt.Errorf("%w: it is of another workflow's run", errState))
	}
	p := pendingOf(r)
	if r.Status != store.RunInterrupted || p.id != st.Interrupt {
		return f.followRun(ctx, s, req, t, st.RunID, st.Cursor) // answered already: go on with the run
	}
	answer, _ := req.Params.InputResponses[inputKey].(*mcp.ElicitResult)
	if answer == nil {
		return f.inputRequired(s, p, st.Cursor, st.Problem)
	}
	resumed, problem, err := f.answer(ctx, s, p, answer)
	switch {
	case err != nil:
		return nil, sdkError(err)
	case resumed:
		return f.followRun(ctx, s, req, t, st.RunID, st.Cursor)
	case problem != "":
		return f.inputRequired(s, p, st.Cursor, problem)
	}
	e := envelopeOf(r)
	return result(e, interruptedNote(e)), nil
}

// answer acts on an elicitation's answer: accept resumes with its content
// (problem says why the resume schema refused it, to ask again); decline
// resumes with a rejection outcome where the interrupt declares one;
// cancel, or a decline without one, resumes nothing.
func (f *Face) answer(ctx context.Context, s *served, p pending, a *mcp.ElicitResult) (resumed bool, problem string, err error) {
	params := protocol.ResumeRunParams{RunID: p.runID}
	switch a.Action {
	case "accept":
		payload := protocol.Object(maps.Clone(a.Content))
		if payload == nil {
			payload = protocol.Object{}
		}
		if p.outcomeField != "" {
			if o, ok := payload[p.outcomeField].(string); ok {
				params.ResumeOutcome = &o
			}
			delete(payload, p.outcomeField)
		}
		params.ResumePayload = payload
	case "decline":
		i := slices.IndexFunc(p.outcomes, func(o string) bool { return slices.Contains(rejections, o) })
		if i < 0 {
			return false, "", nil
		}
		params.ResumeOutcome, params.ResumePayload = &p.outcomes[i], protocol.Object{}
	default:
		return false, "", nil
	}
	err = s.api.Call(ctx, protocol.MethodRunsResume, params, nil)
	if refused, ok := invalidInput(err); ok {
		if a.Action == "decline" {
			return false, "", nil // the rejection needs a payload: the model asks
		}
		return false, refused, nil
	}
	return err == nil, "", err
}

// askMessage is the elicitation's message: the interrupt's, and what was
// wrong with the last answer.
func askMessage(p pending, problem string) string {
	if problem == "" {
		return p.message
	}
	return p.message + "\n\nThe last answer was refused: " + problem
}
