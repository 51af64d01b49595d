package run

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/tracing"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// ResourceRef reads the "ref" input of wf.source.read_resource: the
// logical source and the URI to read.
func ResourceRef(input workflow.Object) (logical, uri string) {
	ref, _ := input["ref"].(map[string]any)
	logical, _ = ref["logical_source"].(string)
	uri, _ = ref["uri"].(string)
	return logical, uri
}

// readResource sends one attempt of a wf.source.read_resource call to the
// session actor of the connection its logical source is bound to, with
// the trace context tc of its step.
func (a *Actor) readResource(f *inflight, tc tracing.Carrier) {
	logical, uri := ResourceRef(f.call.Input)
	conn, ok := "", false
	if a.spec.Sources != nil {
		conn, ok = a.spec.Sources(logical)
	}
	if !ok {
		a.engine.Send(a.self, answered{corr: f.corr, err: fmt.Errorf("unbound logical source %q", logical)})
		return
	}
	f.conn = conn
	a.engine.Send(a.spec.Supervisor, session.ReadResource{
		Connection: conn, URI: uri, Expect: a.expect(conn),
		Deadline: time.Now().Add(a.callTimeout(f.call)), Owner: a.record.ID, Scope: a.spec.Scopes[conn],
		Reply:       reply.At(a.self, f.corr),
		TraceParent: tc.TraceParent, TraceState: tc.TraceState,
		Reports: true,
	})
}

// ResourceOutput projects an MCP ReadResourceResult to the output of
// wf.source.read_resource: the first content's text ("" for binary
// content), truncated to max_chars characters.
func ResourceOutput(input, read workflow.Object) (workflow.Object, error) {
	logical, uri := ResourceRef(input)
	limit := workflow.DefaultResourceChars
	if n, ok := input["max_chars"].(float64); ok && n >= 1 {
		limit = min(int(n), workflow.MaxResourceChars)
	}
	contents, _ := read["contents"].([]any)
	out := workflow.Object{"source_id": logical, "uri": uri, "mime_type": nil, "text": "", "content_count": float64(len(contents)), "truncated": false}
	if len(contents) == 0 {
		return out, nil
	}
	first, ok := contents[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("read %s: content is %T, not an object", uri, contents[0])
	}
	if mime, ok := first["mimeType"].(string); ok {
		out["mime_type"] = mime
	}
	text, _ := first["text"].(string)
	if utf8.RuneCountInString(text) > limit {
		text = string([]rune(text)[:limit])
		out["truncated"] = true
	}
	out["text"] = text
	return out, nil
}
