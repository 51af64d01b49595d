package mcpface

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// An interrupt asks the human through the client, when the client
// declared elicitation and the interrupt's resume schema is a flat form:
// 2025-era sessions are asked with Elicit, once per interrupt, in a loop;
// 2026-era requests are answered input_required, with a signed
// requestState the client's retry brings back. An upstream server's
// elicitation (kind elicitation) is asked as the server asked it: its
// message and requested schema, or its URL to a client that declared URL
// elicitation; the client's action is the outcome. An upstream sampling
// request the source forwards (policy client) is asked of a client that
// declared sampling, the same two ways. Anything else gets the
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
	// upstream marks an upstream server's elicitation: the client's
	// action is the outcome, its content the payload. url (with
	// elicitationID) is set for one of URL mode, which has no form.
	upstream           bool
	url, elicitationID string
	// sampling holds the params of an upstream sampling request to
	// forward to the client (the source's policy is client); nil for any
	// other interrupt.
	sampling protocol.Object
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
	switch in.Kind {
	case session.UpstreamElicitation:
		p.upstream = true
		if mode, _ := in.Payload["mode"].(string); mode == "url" {
			p.url, _ = in.Payload["url"].(string)
			p.elicitationID, _ = in.Payload["elicitation_id"].(string)
			return p
		}
		// The server's own schema, as it asked it: an elicitation schema
		// already (multi-select enums included), no form to make of it.
		p.schema = in.ResumeSchema
		return p
	case session.UpstreamSampling:
		if policy, _ := in.Payload["policy"].(string); policy == config.PolicyClient {
			p.sampling = protocol.Object{}
			for k, v := range in.Payload {
				if !slices.Contains(samplingOwnKeys, k) {
					p.sampling[k] = v
				}
			}
		}
		return p
	}
	p.schema, p.outcomeField = formOf(in.ResumeSchema, in.Outcomes)
	return p
}

// samplingOwnKeys are the keys a sampling interrupt's payload adds to the
// server's params.
var samplingOwnKeys = []string{"connection", "request_id", "policy"}

// askable reports whether the client of req can be asked p: a form to a
// client that declared (form) elicitation, a URL to one that declared URL
// elicitation, a sampling request to one that declared sampling.
func (p pending) askable(req *mcp.CallToolRequest) bool {
	switch {
	case p.sampling != nil:
		return samples(req)
	case p.upstream && p.url != "":
		return elicitsURL(req)
	}
	return p.schema != nil && elicits(req)
}

// request is what asks p of the client: an elicitation (its message with
// what was wrong with the last answer, if anything) or a sampling
// request.
func (p pending) request(problem string) (mcp.InputRequest, error) {
	switch {
	case p.sampling != nil:
		var params mcp.CreateMessageParams
		if err := remarshal(p.sampling, &params); err != nil {
			return nil, fmt.Errorf("the sampling request of run %s: %w", p.runID, err)
		}
		return &params, nil
	case p.url != "":
		return &mcp.ElicitParams{Mode: "url", Message: p.message, URL: p.url, ElicitationID: p.elicitationID}, nil
	}
	return &mcp.ElicitParams{Mode: "form", Message: askMessage(p, problem), RequestedSchema: p.schema}, nil
}

// remarshal decodes v, as JSON, into out.
func remarshal(v, out any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
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

// elicitsURL reports whether the client of req declared URL elicitation.
func elicitsURL(req *mcp.CallToolRequest) bool {
	ip := req.Session.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil && ip.Capabilities.Elicitation.URL != nil
}

// samples reports whether the client of req declared sampling.
func samples(req *mcp.CallToolRequest) bool {
	ip := req.Session.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Sampling != nil
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
	if !p.askable(req) {
		return result(e, interruptedNote(e)), nil
	}
	if modern(req) {
		return f.inputRequired(s, p, cursor, "")
	}
	problem := ""
	for range maxAsks {
		answer, err := f.ask(ctx, req, p, problem)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err() // the run stays interrupted
		case err != nil && p.sampling != nil:
			// The client refused to sample: the server is told so.
			f.log.Info("mcp face: the client refused a sampling request; declining it", "run_id", p.runID, "err", err)
			answer = &mcp.ElicitResult{Action: "decline"}
		case err != nil:
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

// ask asks p of a 2025-era client: an elicitation, or a sampling request.
func (f *Face) ask(ctx context.Context, req *mcp.CallToolRequest, p pending, problem string) (mcp.InputResponse, error) {
	in, err := p.request(problem)
	if err != nil {
		return nil, err
	}
	relateToTask(req, in)
	switch in := in.(type) {
	case *mcp.CreateMessageParams:
		return req.Session.CreateMessage(ctx, in)
	case *mcp.ElicitParams:
		return req.Session.Elicit(ctx, in)
	}
	return nil, fmt.Errorf("no way to ask a %T", in)
}

// inputRequired is the 2026-era answer of an interrupt: one input request
// to fulfil, and the sealed state of the retry.
func (f *Face) inputRequired(s *served, p pending, cursor int64, problem string) (*mcp.CallToolResult, error) {
	st := requestState{Principal: s.who.Name, RunID: p.runID, Interrupt: p.id, Cursor: cursor, Expires: time.Now().Add(stateTTL).Unix(), Problem: problem}
	sealed, err := f.states.sign(st)
	if err != nil {
		return nil, err
	}
	in, err := p.request(problem)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{inputKey: in}, RequestState: sealed}, nil
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
	answer := req.Params.InputResponses[inputKey]
	if answer == nil || !p.answeredBy(answer) {
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

// answeredBy reports whether a is an answer of the kind p asks for.
func (p pending) answeredBy(a mcp.InputResponse) bool {
	switch a.(type) {
	case *mcp.CreateMessageResult, *mcp.CreateMessageWithToolsResult:
		return p.sampling != nil
	case *mcp.ElicitResult:
		return p.sampling == nil
	}
	return false
}

// answer acts on the client's answer: an elicitation's, or a sampling
// request's. Of a workflow's own interrupt, accept resumes with its
// content (problem says why the resume schema refused it, to ask again);
// decline resumes with a rejection outcome where the interrupt declares
// one; cancel, or a decline without one, resumes nothing. Of an upstream
// elicitation, the action is the outcome, and accept's content the
// payload. A sampling answer is the model's message, accepted.
func (f *Face) answer(ctx context.Context, s *served, p pending, in mcp.InputResponse) (resumed bool, problem string, err error) {
	var a *mcp.ElicitResult
	switch in := in.(type) {
	case *mcp.ElicitResult:
		a = in
	default:
		message, err := sampled(in)
		if err != nil {
			return false, "", err
		}
		a = &mcp.ElicitResult{Action: "accept", Content: message}
	}
	params := protocol.ResumeRunParams{RunID: p.runID}
	if p.upstream || p.sampling != nil {
		action := a.Action
		if !slices.Contains([]string{"accept", "decline", "cancel"}, action) {
			action = "cancel" // what the server gets for an answer nobody chose
		}
		params.ResumeOutcome, params.ResumePayload = &action, protocol.Object{}
		if action == "accept" && a.Content != nil {
			params.ResumePayload = protocol.Object(maps.Clone(a.Content))
		}
		return f.resume(ctx, s, params, action)
	}
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
	return f.resume(ctx, s, params, a.Action)
}

// resume resumes a run with the client's answer (its action): refused
// because of the payload, an accept has its problem, to ask again; any
// other leaves the run interrupted, for the model to ask.
func (f *Face) resume(ctx context.Context, s *served, params protocol.ResumeRunParams, action string) (resumed bool, problem string, err error) {
	err = s.api.Call(ctx, protocol.MethodRunsResume, params, nil)
	if refused, ok := invalidInput(err); ok {
		if action != "accept" {
			return false, "", nil // the rejection needs a payload: the model asks
		}
		return false, refused, nil
	}
	return err == nil, "", err
}

// sampled is a client's sampling answer as the payload of the interrupt's
// resume: the model's message (role, content, model, stopReason), its
// content one block.
func sampled(in mcp.InputResponse) (map[string]any, error) {
	var message map[string]any
	if err := remarshal(in, &message); err != nil {
		return nil, fmt.Errorf("decode the client's sampling answer: %w", err)
	}
	if blocks, ok := message["content"].([]any); ok && len(blocks) == 1 {
		message["content"] = blocks[0]
	}
	delete(message, "_meta")
	return message, nil
}

// askMessage is the elicitation's message: the interrupt's, and what was
// wrong with the last answer.
func askMessage(p pending, problem string) string {
	if problem == "" {
		return p.message
	}
	return p.message + "\n\nThe last answer was refused: " + problem
}
