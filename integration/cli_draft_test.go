package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// draftCLI runs `mcpflow draft` edits of one workspace and tracks the
// revision each should leave.
type draftCLI struct {
	cliTool
	workspace string
	revision  int
}

// edit runs `mcpflow draft VERB WORKSPACE args...` as a table, checks that
// it printed the next revision and status, and that the workspace (asked
// with draft get -o json) is at that revision with that status.
func (d *draftCLI) edit(status, verb string, args ...string) cliResult {
	d.t.Helper()
	is := is.New(d.t)
	words := append(append(strings.Fields(verb), d.workspace), args...)
	r := d.want(0, append([]string{"draft"}, words...)...)
	d.revision++
	is.True(matches(r.stdout, `revision:\s+%d\n`, d.revision)) // the new revision
	is.True(matches(r.stdout, `status:\s+%s\n`, status))       // and status
	w := cliJSON[p.WorkspaceResult](d.t, d.want(0, "draft", "get", d.workspace, "-o", "json"))
	is.Equal(w.Revision, d.revision)
	is.Equal(w.Status, status)
	return r
}

// editJSON runs an edit with -o json and answers its result.
func (d *draftCLI) editJSON(status, verb string, args ...string) p.DraftEditResult {
	d.t.Helper()
	is := is.New(d.t)
	words := append(append(strings.Fields(verb), d.workspace), args...)
	res := cliJSON[p.DraftEditResult](d.t, d.want(0, append(append([]string{"draft"}, words...), "-o", "json")...))
	d.revision++
	is.Equal(res.WorkspaceID, d.workspace)
	is.Equal(res.Revision, d.revision)
	is.Equal(res.Status, status)
	return res
}

// matches reports whether s matches the regexp format makes with args.
func matches(s, format string, args ...any) bool {
	return regexp.MustCompile(fmt.Sprintf(format, args...)).MatchString(s)
}

// startDemoServer starts `mcpflow serve` with the demo source, waiting up
// to 30s for a run, and answers a CLI aimed at it.
func startDemoServer(t *testing.T) (cliTool, string) {
	t.Helper()
	dir := t.TempDir()
	cfgPath := writeConfig(t, dir, stdioSource("demo.default", binary, "demo-server"))
	srv := startProcess(t, cfgPath, "serve.log", "--run-wait", "30s")
	return cliTool{t: t, url: srv.url}, dir
}

// TestCLIAuthorsABranchingWorkflowAndRunsIt builds, through the real
// binary's draft commands alone, a workflow with a foreach over a list, a
// capability step in its body, a when and an interrupt; validates it,
// sees its one diagnostic and fixes it with a JSON Patch; saves, deploys
// and runs it; resumes the interrupt and follows the run. Each step checks
// the table and the -o json output.
func TestCLIAuthorsABranchingWorkflowAndRunsIt(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	c, dir := startDemoServer(t)
	d := &draftCLI{cliTool: c, workspace: "triage"}

	// An empty workspace: no steps, so no start.
	r := c.want(0, "draft", "create", "triage", "--name", "triage", "--title", "Triage tags")
	d.revision = 1
	is.True(matches(r.stdout, `revision:\s+1\n`))
	is.True(matches(r.stdout, `status:\s+invalid\n`))
	is.True(matches(r.stdout, `error\s+unknown_start\s+start`)) // the diagnostic, as a row
	is.True(strings.Contains(r.stdout, "next: "))               // and what to do next
	r = c.want(1, "draft", "create", "triage", "--name", "again")
	is.True(strings.Contains(r.stderr, "workspace_exists")) // one workspace per id
	list := cliJSON[p.ListWorkspacesResult](t, c.want(0, "draft", "list", "-o", "json"))
	is.Equal(len(list.Workspaces), 1)
	is.True(strings.Contains(c.want(0, "draft", "list").stdout, "Triage tags"))

	d.editJSON("invalid", "contract set",
		"--input-schema", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}},"urgent":{"type":"boolean"}}}`,
		"--state-schema", `{"type":"object","properties":{"echoes":{"type":"array","reducer":"wf.std.append"},"approved":{"type":"boolean"}}}`,
		"--output-schema", `{"type":"object","properties":{"echoes":{"type":"array"},"approved":{"type":"boolean"}}}`)

	// each: once per tag, its body say; then check. The steps it names
	// come later: the workspace keeps invalid drafts.
	r = d.edit("invalid", "add foreach", "each", "--over", "input.tags", "--as", "tag", "--route", "loop=say", "--route", "done=check")
	is.True(matches(r.stdout, `start:\s+each\n`)) // the first step is the start
	is.True(strings.Contains(r.stdout, `unknown step "say"`))
	// say: the capability step, echoing each tag into state.echoes.
	res := d.editJSON("invalid", "add use", "say", "demo.default.echo", "--in", "message=context.tag",
		"--out", "state.echoes=message", "--route", "ok=each", "--route", "error=each")
	is.Equal(res.Summary.Steps, []string{"each", "say"})
	// check: ask when urgent, else end. Its path has a typo.
	d.edit("invalid", "add when", "check", "--if", "input.urgnt == true", "--then", "ask")
	// ask: an approval, stored in state.approved.
	res = d.editJSON("invalid", "add interrupt", "ask", "--kind", "approval", "--request-value", "message=Ship it?",
		"--resume", "state.approved=approved", "--route", "submitted=__end__",
		"--resume-schema", `{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}`)
	is.Equal(res.Summary.Steps, []string{"ask", "check", "each", "say"})
	d.edit("invalid", "output set", "--in", "echoes=state.echoes", "--in", "approved=state.approved")

	// Validate: one diagnostic, the typo; validate exits 1 and makes no
	// revision.
	r = c.want(1, "draft", "validate", "triage")
	is.True(matches(r.stdout, `status:\s+invalid\n`))
	is.True(matches(r.stdout, `error\s+invalid_condition_path\s+steps\.check`))
	is.True(strings.Contains(r.stderr, "workspace triage is invalid: 1 error(s)"))
	invalid := cliJSON[p.WorkspaceResult](t, c.want(1, "draft", "validate", "triage", "-o", "json"))
	is.Equal(invalid.Revision, d.revision)
	is.Equal(len(invalid.Diagnostics), 1) // one diagnostic
	diag := invalid.Diagnostics[0]
	is.Equal(diag.Code, "invalid_condition_path")
	is.True(strings.Contains(diag.Message, "urgnt"))
	c.want(1, "draft", "compile", "triage")

	// Fix it with an RFC 6902 patch.
	patch := filepath.Join(dir, "fix.json")
	is.NoErr(os.WriteFile(patch, []byte(`[{"op":"replace","path":"/steps/check/when/if/left/path","value":"input.urgent"}]`), 0o600))
	r = d.edit("valid", "patch", patch)
	is.True(!strings.Contains(r.stdout, "diagnostics:")) // none left
	valid := cliJSON[p.WorkspaceResult](t, c.want(0, "draft", "validate", "triage", "-o", "json"))
	is.Equal(valid.Status, "valid")
	is.Equal(len(valid.Diagnostics), 0)
	is.True(matches(c.want(0, "draft", "validate", "triage").stdout, `status:\s+valid\n`))

	// A stale revision is refused and changes nothing.
	r = c.want(1, "draft", "name", "set", "triage", "other", "--revision", "2")
	is.True(strings.Contains(r.stderr, "workspace triage changed"))
	is.True(strings.Contains(r.stderr, "revision_conflict"))

	// Compile and export.
	compiled := cliJSON[p.CompileWorkspaceResult](t, c.want(0, "draft", "compile", "triage", "-o", "json"))
	is.True(compiled.CompiledPlan != nil)
	is.Equal(planOf(t, compiled.CompiledPlan).Start, "each")
	is.Equal(len(planOf(t, compiled.CompiledPlan).Nodes), 4)
	is.True(matches(c.want(0, "draft", "compile", "triage").stdout, `say\s+node\s+demo\.default\.echo`))
	exported := filepath.Join(dir, "triage.json")
	c.want(0, "draft", "export", "triage", "--file", exported)
	doc, err := os.ReadFile(exported)
	is.NoErr(err)
	is.True(strings.Contains(string(doc), `"foreach": {`)) // the document, indented
	is.Equal(c.want(0, "draft", "export", "triage").stdout, string(doc))

	// Save, twice: -o json, then a table with the deploy line.
	saved := cliJSON[p.CreateArtifactResult](t, c.want(0, "draft", "save", "triage", "--artifact", "triage", "-o", "json"))
	is.True(saved.Saved)
	is.Equal(saved.RequiredLogicalSources, []string{"demo.default"})
	r = c.want(0, "draft", "save", "triage", "--artifact", "triage", "--version", "2")
	is.True(strings.Contains(r.stdout, "triage v2"))
	is.True(strings.Contains(r.stdout, "deploy it: mcpflow deploy --artifact triage --version 2 --bind demo.default=demo.default"))

	// Deploy and run: the foreach echoes both tags, then the run waits at ask.
	dep := cliJSON[p.SaveDeploymentResult](t, c.want(0, "deploy", "--artifact", "triage", "--version", "2", "--bind", "demo.default=demo.default", "-o", "json"))
	is.Equal(dep.DeploymentID, "triage.default")
	r = c.want(3, "run", "triage.default", "--input", `{"tags":["a","b"],"urgent":true}`, "--follow", "-o", "json")
	asked := cliJSON[p.RunResult](t, r)
	is.Equal(asked.Status, "interrupted")
	is.Equal(asked.Interrupt["kind"], "approval")
	is.True(strings.Contains(r.stderr, "say [each#1]: ok")) // followed live, on stderr with -o json
	is.True(strings.Contains(r.stderr, "check: true"))
	runID := *asked.RunID

	// Resume the interrupt; the run completes with both echoes.
	resumed := cliJSON[p.RunResult](t, c.want(0, "runs", "resume", runID, "--payload", `{"approved":true}`, "-o", "json"))
	is.Equal(resumed.Status, "completed")
	is.Equal(resumed.Output, p.Object{"echoes": []any{"a", "b"}, "approved": true})
	r = c.want(0, "runs", "trace", runID)
	is.True(matches(r.stdout, `ask\s+interrupt\s+submitted`)) // the resumed step, in the trace
	trace := cliJSON[p.RunResult](t, c.want(0, "runs", "trace", runID, "-o", "json"))
	is.Equal(trace.Trace[len(trace.Trace)-1].NodeID, "ask")

	// Not urgent: the when goes the other way, and the run completes.
	r = c.want(0, "run", "triage.default", "--input", `{"tags":["c"],"urgent":false}`, "--follow")
	is.True(strings.Contains(r.stdout, "check: false"))
	is.True(strings.Contains(r.stdout, "completed"))
	is.True(!strings.Contains(r.stdout, "ask:")) // never asked

	// The other edits, each leaving the status it should.
	d.edit("valid", "replace", exported) // the document as exported
	d.edit("valid", "name set", "triage_tags")
	d.edit("valid", "step update", "say", "--retry", "1")
	r = d.edit("invalid", "branch", "say", "error=__end__")
	is.True(strings.Contains(r.stdout, "invalid_foreach_return")) // a body must route back to its loop
	d.edit("valid", "handle", "say:error", "--to", "each")
	d.edit("invalid", "route remove", "ask", "submitted")
	d.edit("valid", "route set", "ask", "submitted", "__end__")
	d.edit("valid", "binding remove", "say", "--output", "message")
	d.edit("valid", "outputs set", "say", "--out", "state.echoes=message")
	r = d.edit("valid", "add end", "unused", "--outcome", "ok")
	is.True(matches(r.stdout, `warning\s+unreachable_step`)) // a warning does not make it invalid
	d.edit("valid", "step remove", "unused")
	d.edit("valid", "start set", "each")
	d.edit("valid", "bind", "say", "local.message", "output.last")
	final := cliJSON[p.CompileWorkspaceResult](t, c.want(0, "draft", "compile", "triage", "-o", "json"))
	for _, n := range planOf(t, final.CompiledPlan).Nodes {
		if n.ID == "say" {
			is.Equal(*n.Retry, 1) // step update's retry, compiled
		}
	}

	// Delete: then it is gone.
	r = c.want(0, "draft", "delete", "triage")
	is.True(matches(r.stdout, `status:\s+deleted`))
	r = c.want(1, "draft", "delete", "triage", "-o", "json")
	is.True(strings.Contains(r.stdout, `"not_found"`))
}

// editorScript writes an executable shell script of body, the editor's
// file in "$1", and answers its path.
func editorScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	is.New(t).NoErr(os.WriteFile(path, []byte("#!/bin/sh\nset -e\n"+body+"\n"), 0o700))
	return path
}

// keptFile is the file a refused `draft edit` says it kept.
var keptFile = regexp.MustCompile(`your document is kept in (\S+)\)`)

// TestCLIDraftEditSavesWithTheRevisionCheck runs `mcpflow draft edit` with
// EDITOR set to scripts: an edit is saved as the next revision, an
// unchanged document saves nothing, a document that is not JSON is kept,
// and when someone else saves while the editor is open, the save is
// refused with the diff from their revision to mine and, with no terminal
// to ask on, fails with the conflict and keeps my document.
func TestCLIDraftEditSavesWithTheRevisionCheck(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	c, dir := startDemoServer(t)
	r := c.want(0, "draft", "create", "counter_ws", "--from-capability", "demo.default.counter", "--name", "counter")
	is.True(matches(r.stdout, `steps:\s+call,tool_error\n`)) // scaffolded around the capability
	is.True(matches(r.stdout, `status:\s+valid\n`))
	at := func() p.WorkspaceResult {
		return cliJSON[p.WorkspaceResult](t, c.want(0, "draft", "get", "counter_ws", "--document", "-o", "json"))
	}
	is.Equal(at().Revision, 1)

	// An edit: saved as revision 2.
	rename := c
	rename.env = []string{"EDITOR=" + editorScript(t, dir, "rename.sh", `sed -i 's/"name": "counter"/"name": "renamed"/' "$1"`)}
	r = rename.want(0, "draft", "edit", "counter_ws")
	is.True(matches(r.stdout, `revision:\s+2\n`))
	is.True(matches(r.stdout, `name:\s+renamed\n`))
	w := at()
	is.Equal(w.Revision, 2)
	is.Equal(w.Draft["name"], "renamed")

	// No change: nothing saved. With -o json, an edit prints the result.
	same := c
	same.env = []string{"EDITOR=true"}
	r = same.want(0, "draft", "edit", "counter_ws")
	is.True(strings.Contains(r.stderr, "no change"))
	is.Equal(at().Revision, 2)
	same.env = []string{"EDITOR=" + editorScript(t, dir, "layout.sh", `sed -i 's/^  /    /' "$1"`)}
	r = same.want(0, "draft", "edit", "counter_ws") // the same document, indented otherwise
	is.True(strings.Contains(r.stderr, "no change (only its layout)"))
	is.Equal(at().Revision, 2)
	again := c
	again.env = []string{"EDITOR=" + editorScript(t, dir, "again.sh", `sed -i 's/"name": "renamed"/"name": "again"/' "$1"`)}
	edited := cliJSON[p.WorkspaceResult](t, again.want(0, "draft", "edit", "counter_ws", "-o", "json"))
	is.Equal(edited.Revision, 3)
	is.Equal(edited.Summary.Name, "again")

	// Not JSON: refused, kept, nothing saved.
	broken := c
	broken.env = []string{"EDITOR=" + editorScript(t, dir, "broken.sh", `echo '{ not json' > "$1"`)}
	r = broken.want(1, "draft", "edit", "counter_ws")
	is.True(strings.Contains(r.stderr, "not a JSON object"))
	m := keptFile.FindStringSubmatch(r.stderr)
	is.True(m != nil) // it says where the document is
	kept, err := os.ReadFile(m[1])
	is.NoErr(err)
	is.Equal(string(kept), "{ not json\n")
	is.NoErr(os.Remove(m[1]))
	is.Equal(at().Revision, 3)

	// A conflict: while my editor is open, someone renames the workflow
	// to theirs (revision 4); I rename it to mine.
	conflict := c
	conflict.env = []string{"MCPFLOW_TEST_BIN=" + binary, "EDITOR=" + editorScript(t, dir, "conflict.sh",
		`"$MCPFLOW_TEST_BIN" draft name set counter_ws theirs >/dev/null
sed -i 's/"name": "again"/"name": "mine"/' "$1"`)}
	r = conflict.want(1, "draft", "edit", "counter_ws")
	is.True(strings.Contains(r.stderr, "workspace counter_ws changed while you edited it: it is at revision 4, you opened revision 3"))
	is.True(strings.Contains(r.stderr, "--- revision 4\n+++ yours\n"))
	is.True(strings.Contains(r.stderr, `-   "name": "theirs",`)) // the diff from their revision to mine
	is.True(strings.Contains(r.stderr, `+   "name": "mine",`))
	is.True(!strings.Contains(r.stderr, "[y/N]")) // no terminal: no question
	m = keptFile.FindStringSubmatch(r.stderr)
	is.True(m != nil)
	kept, err = os.ReadFile(m[1])
	is.NoErr(err)
	is.True(strings.Contains(string(kept), `"name": "mine"`)) // my document is not lost
	w = at()
	is.Equal(w.Revision, 4)
	is.Equal(w.Draft["name"], "theirs") // theirs stands

	// The same on a terminal: asked, "y" saves mine over their revision.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conflict.env = []string{"MCPFLOW_TEST_BIN=" + binary, "EDITOR=" + editorScript(t, dir, "conflict2.sh",
		`"$MCPFLOW_TEST_BIN" draft name set counter_ws others >/dev/null
sed -i 's/"name": "theirs"/"name": "mine"/' "$1"`)}
	term := startPTY(t, ctx, conflict.command(ctx, "draft", "edit", "counter_ws"), &pty.Winsize{Rows: 40, Cols: 120})
	term.read(func(s string) bool { return strings.Contains(s, "Save yours over revision 5? [y/N] ") }, "the question")
	is.True(strings.Contains(term.screen.String(), `+   "name": "mine",`)) // the diff, before the question
	term.write("y\n")
	is.NoErr(term.wait()) // saved
	is.True(matches(term.screen.String(), `revision:\s+6\r\n`))
	w = at()
	is.Equal(w.Revision, 6)
	is.Equal(w.Draft["name"], "mine") // mine, over theirs
}

// planOf decodes a compiled plan the API answered (the workflow
// language's JSON, carried unread).
func planOf(t *testing.T, raw p.Plan) workflow.Plan {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var plan workflow.Plan
	is.NoErr(json.Unmarshal(raw, &plan)) // the plan decodes
	return plan
}
