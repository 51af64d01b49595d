package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// consoleScreens are the screenshots the browser test takes and
// docs/console.md shows.
var consoleScreens = []string{"signin", "overview", "discover", "playground", "workbench", "workbench-diagnostic", "artifacts", "deployment", "runs", "run", "run-interrupt", "read-token", "tablet"}

// consoleServer is the real binary with an admin and a read token, the
// demo source and the fakes server (its sleep tool is slow).
func consoleServer(t *testing.T) (base string, admin *client.Client) {
	t.Helper()
	dir := t.TempDir()
	cfg := writeServerConfig(t, dir, config.Server{
		Sources: []config.Connection{stdioSource("demo.default", binary, "demo-server"), stdioSource("slow.default", fakeMCP)},
		Access:  &config.Access{Tokens: []config.Token{adminToken, readToken}},
	})
	pr := startProcess(t, cfg, "mcpflow.log")
	c, err := client.DialToken(testContext(t), pr.url, adminToken.Token)
	is.New(t).NoErr(err)
	t.Cleanup(func() { _ = c.Close() })
	return "http://" + strings.TrimSuffix(strings.TrimPrefix(pr.url, "ws://"), "/ws"), c
}

// TestConsoleInTheBrowser drives the web console of the real binary in a
// real headless Chromium: the seed journey in the browser only, a run
// followed live, an interrupt answered through its generated form, a
// cancel, a workflow built in the workbench, and a read token's view.
// No page may log an error; each screen is screenshotted (into
// docs/console/ with MCPFLOW_SCREENSHOTS=1).
func TestConsoleInTheBrowser(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary and Chromium")
	}
	chromium := newChromium(t)
	base, admin := consoleServer(t)

	t.Run("seed journey", func(t *testing.T) {
		b := newTab(t, chromium, base)
		b.open("")
		b.wait("the sign-in form", `!!document.querySelector("#token")`)
		var apart bool
		b.eval("the Connect button's place", `(() => {
			const help = document.querySelector("#token-help"), button = document.querySelector('form button[type="submit"]');
			return !help.contains(button) && help.getBoundingClientRect().bottom <= button.getBoundingClientRect().top;
		})()`, &apart)
		is.New(t).True(apart) // the Connect button sits below the help text, not inline with it
		b.shot("signin")
		b.signIn(adminToken.Token)
		b.wait("all four scopes", `document.querySelector("[data-scopes]").dataset.scopes === "read run author admin"`)

		b.route("discover")
		b.wait("the counter capability", `!!document.querySelector('[data-capability="demo.default.counter"]')`)
		b.press(`[data-capability="demo.default.counter"]`)
		b.wait("its contract", `document.querySelector("#cap-h")?.textContent === "demo.default.counter"`)
		b.shot("discover")
		b.click("Create workflow")
		b.wait("the workbench with the scaffold's steps", `!!document.querySelector('[data-step="call"]') && !!document.querySelector('[data-step="tool_error"]')`)
		b.wait("a valid draft", `document.querySelector("#bench-h .status")?.textContent === "valid"`)
		b.shot("workbench")
		// Save artifact titles it as the CLI's `workflow new` does (the
		// server's scaffold title), so that both journeys save one artifact.
		b.wait("the scaffold's title", `document.querySelector("#a-title")?.value === "Counter Workflow"`)
		b.click("Save artifact")
		b.click("Deploy")
		b.click("Run it")
		waitRunOutput(b, "completed", `"count": 1`)
		b.shot("run")

		b.route("artifacts/deployment/counter_workflow.default")
		b.wait("the deployment's validation", `document.querySelector("[data-validation]")?.dataset.validation === "runnable"`)
		b.shot("deployment")
		var cli, frame string
		b.eval("the run's command", `document.querySelector('code[data-copy="CLI"]').textContent`, &cli)
		is.New(t).Equal(cli, "mcpflow run counter_workflow.default") // Copy as CLI
		b.eval("the run's frame", `document.querySelector('code[data-copy="JSON-RPC"]').textContent`, &frame)
		is.New(t).Equal(frame, `{"jsonrpc":"2.0","id":1,"method":"workflow.runs.start","params":{"deployment_id":"counter_workflow.default","wait":false}}`) // Copy as JSON-RPC
		b.click("Start a run")
		waitRunOutput(b, "completed", `"count": 2`)

		b.route("artifacts/artifact/counter_workflow/1")
		b.wait("the plan graph", `!!document.querySelector('[aria-label="Plan graph"] [data-step="call"]')`)
		b.shot("artifacts")

		b.route("overview")
		b.wait("one session behind both runs", `document.querySelector('[data-connection="demo.default"] [data-sessions-opened]')?.dataset.sessionsOpened === "1" && document.querySelector('[data-count="completed"]')?.textContent === "2"`)
		b.shot("overview")
		b.route("runs")
		b.wait("both runs listed", `document.querySelectorAll("tr[data-run]").length === 2`)
		b.shot("runs")
		b.noErrors()
	})

	t.Run("playground", func(t *testing.T) {
		b := newTab(t, chromium, base)
		b.open("discover/demo.default.echo")
		b.signIn(adminToken.Token)
		b.wait("the acknowledgement first", `!!document.querySelector(".ack") && !document.querySelector(".playground .schema-form")`)
		b.eval("acknowledge", `document.querySelector(".ack input").click()`, nil)
		b.wait("the form from the input schema", `!!document.querySelector(".playground .schema-form input[type=text]")`)
		b.fill(".playground .schema-form input[type=text]", "hello")
		b.click("Call")
		b.wait("the outcome and output", `document.querySelector('[aria-label="call result"]')?.dataset.outcome === "ok" && document.querySelector('[aria-label="output"]').textContent.includes("hello")`)
		b.shot("playground")
		b.noErrors()
	})

	t.Run("live", func(t *testing.T) {
		dep := deployDraft(t, admin, "nap", napWorkflow(2500), "slow.default")
		// The page is open and signed in before the run starts: its 2.7 s
		// are for the page to follow it, not to load and sign in too.
		b := newTab(t, chromium, base)
		b.open("runs")
		b.signIn(adminToken.Token)
		run, err := admin.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: dep, Wait: ptr(false)})
		is.New(t).NoErr(err)
		b.route("runs/" + *run.RunID)
		// The first step is lit and in the timeline while the run still runs.
		b.wait("a step before the run ends", `document.querySelector('[data-run-status]').dataset.runStatus === "running" && !!document.querySelector('.timeline li[data-node="first"][data-state="ok"]') && !!document.querySelector('[aria-label="Run graph"] [data-step="first"][data-state="ok"]')`)
		b.wait("the second step running", `!!document.querySelector('.timeline li[data-node="second"]')`)
		b.wait("the run completed, with no reload", `document.querySelector('[data-run-status]').dataset.runStatus === "completed" && !!document.querySelector('.timeline li[data-node="second"][data-state="ok"]')`)
		b.noErrors()
	})

	t.Run("interrupt", func(t *testing.T) {
		saveArtifact(t, admin, "approve", approvalWorkflow, []string{"ok", "rejected"})
		saved, err := admin.SaveDeployment(testContext(t), p.Object{"id": "approve.default", "artifact_id": "approve", "artifact_version": 1, "bindings": []any{}})
		is.New(t).NoErr(err)
		dep := saved.DeploymentID
		run, err := admin.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: dep, WorkflowInput: p.Object{"title": "Deploy v2"}, Wait: ptr(false)})
		is.New(t).NoErr(err)
		b := newTab(t, chromium, base)
		b.open("runs/" + *run.RunID)
		b.signIn(adminToken.Token)
		b.wait("the interrupt form", `!!document.querySelector("#int-h")`)
		b.wait("the form refuses a missing comment", `document.querySelector('[aria-label="answer problems"]')?.textContent.includes("comment is required")`)
		b.eval("tick approved", `document.querySelector('.interrupt input[type="checkbox"]').click()`, nil)
		b.fill(`.interrupt input[type="text"]`, "ship it")
		b.shot("run-interrupt")
		b.click("Resume")
		waitRunOutput(b, "completed", `"comment": "ship it"`)
		res, err := admin.InspectRun(testContext(t), *run.RunID)
		is.New(t).NoErr(err)
		is.New(t).Equal(res.Output, p.Object{"approved": true, "comment": "ship it"}) // the run completed with the form's payload
		b.noErrors()
	})

	t.Run("cancel", func(t *testing.T) {
		dep := deployDraft(t, admin, "long_nap", napWorkflow(120000), "slow.default")
		run, err := admin.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: dep, Wait: ptr(false)})
		is.New(t).NoErr(err)
		b := newTab(t, chromium, base)
		b.open("runs/" + *run.RunID)
		b.signIn(adminToken.Token)
		b.wait("the long step running", `!!document.querySelector('.timeline li[data-node="second"][data-state="running"]')`)
		b.eval("accept the confirmation", `window.confirm = () => true`, nil)
		b.click("Cancel run")
		b.wait("cancelled", `document.querySelector('[data-run-status]').dataset.runStatus === "cancelled"`)
		b.noErrors()
	})

	t.Run("workbench", func(t *testing.T) {
		b := newTab(t, chromium, base)
		b.open("workbench")
		b.signIn(adminToken.Token)
		b.fill("#empty-ws", "built_ws")
		b.fill("#empty-name", "built")
		b.click("Create empty workflow")
		b.wait("an empty workbench", `location.hash === "#/workbench/built_ws"`)
		addCapabilityStep(b, "count", "demo.default.counter")
		addCapabilityStep(b, "say", "demo.default.echo")
		b.fill("#new-step-id", "check")
		b.fill("#new-step-kind", "when")
		b.click("Add when step")
		b.wait("the when step", `!!document.querySelector('[data-step="check"][data-kind="when"]')`)

		// Routes by dragging from an outcome to a step.
		b.drag(`[data-step="count"] [data-outcome="ok"]`, `[data-step="check"] .react-flow__handle-top`)
		b.wait("count ok → check", `!!document.querySelector('[data-id="count:ok->check"]')`)
		b.drag(`[data-step="check"] [data-outcome="then"]`, `[data-step="say"] .react-flow__handle-top`)
		b.wait("check then → say", `!!document.querySelector('[data-id="check:then->say"]')`)
		b.drag(`[data-step="say"] [data-outcome="ok"]`, `[data-step="__end__"] .react-flow__handle-top`)
		b.wait("say ok → end", `!!document.querySelector('[data-id="say:ok->__end__"]')`)

		// A step is picked by clicking it on the canvas, or from the picker.
		b.clickStep("check")
		b.wait("the panel of check", `document.querySelector("#step-h")?.textContent.startsWith("Step check")`)
		// The rest through the forms: error routes, start, bindings, the condition.
		for _, step := range []string{"count", "say"} {
			selectStep(b, step)
			b.fill("#route-o", "error")
			b.fill("#route-t", "__end__")
			edit(b, "Set route")
			b.wait(step+" error → end", fmt.Sprintf(`!!document.querySelector('[data-id="%s:error->__end__"]')`, step))
		}
		selectStep(b, "count")
		edit(b, "Make start")
		b.wait("count is the start", `!!document.querySelector('[data-step="count"] .badge')`)
		b.click("Add output")
		b.fill(`[aria-label="output 1 source"]`, "count")
		b.fill(`[aria-label="output 1 target"]`, "state.count")
		edit(b, "Save outputs")
		b.wait("the output saved", `document.querySelector('[aria-label="output 1 target"]')?.value === "state.count"`)
		// A wrong binding: say's message read from a context field that does not exist.
		selectStep(b, "say")
		b.click("Add input")
		b.fill(`[aria-label="input 1 target"]`, "message")
		b.fill(`[aria-label="input 1 source"]`, "context.nope")
		edit(b, "Save inputs")
		b.wait("the diagnostic on the node", `document.querySelector('[data-step="say"] .step-problems')?.textContent.includes("invalid_source_path")`)
		b.shot("workbench-diagnostic")
		// Fixed: a literal message.
		b.fill(`[aria-label="input 1 source kind"]`, "value")
		b.fill(`[aria-label="input 1 source"]`, `"big enough"`)
		edit(b, "Save inputs")
		b.wait("the diagnostic gone", `!document.querySelector('[data-step="say"] .step-problems')`)

		selectStep(b, "check")
		b.fill("#when-left", "state.count")
		b.fill("#when-op", "ge")
		b.fill("#when-right", "1")
		edit(b, "Save condition")
		b.wait("the condition drawn", `document.querySelector('[data-step="check"] .step-detail')?.textContent === "state.count ge 1"`)
		// Undo and redo are new revisions that restore a document.
		var before int
		b.eval("the revision", `Number(document.querySelector("#bench-h small").textContent.replace("revision ", ""))`, &before)
		b.click("Undo")
		b.wait("the condition undone, as a new revision", fmt.Sprintf(`document.querySelector('[data-step="check"] .step-detail')?.textContent === "exists input.value" && document.querySelector("#bench-h small").textContent === "revision %d"`, before+1))
		b.click("Redo")
		b.wait("the condition redone", fmt.Sprintf(`document.querySelector('[data-step="check"] .step-detail')?.textContent === "state.count ge 1" && document.querySelector("#bench-h small").textContent === "revision %d"`, before+2))
		is := is.New(t)
		b.wait("the handles of count", `document.querySelectorAll('[data-step="count"] [data-outcome]').length === 2`)
		is.Equal(outcomeOrder(b, "count"), []string{"ok", "error"}) // the workbench draws ok, then error
		b.click("Validate")
		b.wait("a valid draft", `document.querySelector("#bench-h .status")?.textContent === "valid"`)
		b.click("Save artifact")
		b.click("Deploy")
		b.click("Run it")
		b.wait("the run completed through both steps", `document.querySelector('[data-run-status]')?.dataset.runStatus === "completed" && !!document.querySelector('.timeline li[data-node="say"][data-state="ok"]')`)
		b.wait("the run graph's handles of count", `document.querySelectorAll('[data-step="count"] [data-outcome]').length === 2`)
		is.Equal(outcomeOrder(b, "count"), []string{"ok", "error"}) // the run page draws them in the same order
		b.noErrors()
	})

	t.Run("conflict", func(t *testing.T) {
		b := newTab(t, chromium, base)
		b.open("workbench/counter_ws")
		b.signIn(adminToken.Token)
		b.wait("the draft", `!!document.querySelector('[data-step="call"]')`)
		var ws p.WorkspaceResult
		is.New(t).NoErr(admin.Call(testContext(t), "workflow.draft_workspaces.get", p.Object{"workspace_id": "counter_ws"}, &ws))
		// Someone else renames it behind the page's back.
		is.New(t).NoErr(admin.Call(testContext(t), "workflow.draft_workspaces.set_name", p.Object{"workspace_id": "counter_ws", "revision": ws.Revision, "name": "theirs"}, &ws))
		b.press("details.panel:nth-of-type(2) > summary")
		b.fill("#c-name", "mine")
		b.click("Save name")
		b.wait("the conflict offered", `document.querySelector(".conflict")?.textContent.includes("Someone else changed this workspace")`)
		b.click("Reapply mine")
		b.wait("mine applied on theirs, as the next revision", fmt.Sprintf(`!document.querySelector(".conflict") && document.querySelector("#bench-h small")?.textContent === "revision %d"`, ws.Revision+1))
		is.New(t).NoErr(admin.Call(testContext(t), "workflow.draft_workspaces.get", p.Object{"workspace_id": "counter_ws", "include_draft": true}, &ws))
		is.New(t).Equal(ws.Draft["name"], "mine") // the reapplied edit landed on the newer revision
		b.noErrors()
	})

	t.Run("tablet", func(t *testing.T) {
		b := newTab(t, chromium, base)
		b.do("a tablet's viewport", chromedp.EmulateViewport(768, 1024))
		b.open("workbench/counter_ws")
		b.signIn(adminToken.Token)
		b.wait("the draft", `!!document.querySelector('[data-step="call"]')`)
		var wide bool
		b.eval("horizontal overflow", `document.documentElement.scrollWidth > window.innerWidth`, &wide)
		is.New(t).True(!wide) // nothing wider than the tablet
		b.shot("tablet")
		b.noErrors()
	})

	t.Run("read token", func(t *testing.T) {
		b := newTab(t, chromium, base)
		b.open("discover/demo.default.counter")
		b.signIn(readToken.Token)
		b.wait("the read scope only", `document.querySelector("[data-scopes]").dataset.scopes === "read"`)
		b.wait("the contract", `document.querySelector("#cap-h")?.textContent === "demo.default.counter"`)
		is := is.New(t)
		is.True(!b.has(".playground"))         // no playground without run
		is.True(!b.hasText("Create workflow")) // no authoring without author
		b.route("artifacts/deployment/counter_workflow.default")
		b.wait("the deployment", `document.querySelector("#d-h")?.textContent === "counter_workflow.default"`)
		is.True(!b.hasText("Start a run"))       // no run control
		is.True(!b.hasText("Delete deployment")) // no delete
		b.shot("read-token")
		b.route("workbench/counter_ws")
		b.wait("the draft graph", `!!document.querySelector('[data-step="call"]')`)
		is.True(!b.has("#new-step-id"))                    // no palette
		is.True(!b.hasText("Undo"))                        // no edits
		is.True(!b.hasText("Save artifact"))               // no publishing
		is.True(!b.has(".react-flow__handle.connectable")) // nothing to drag
		// A crafted mutating call with this token, sent from the page, is refused.
		var code int
		b.eval("a crafted runs.start", fmt.Sprintf(`new Promise((resolve) => {
			const ws = new WebSocket(location.origin.replace("http", "ws") + "/ws", ["mcpflow", "mcpflow.bearer." + %q]);
			ws.onopen = () => ws.send(JSON.stringify({jsonrpc: "2.0", id: 1, method: "workflow.runs.start", params: {deployment_id: "counter_workflow.default"}}));
			ws.onmessage = (m) => { resolve(JSON.parse(m.data).error?.code ?? 0); ws.close(); };
		})`, readToken.Token), &code)
		is.Equal(code, -32003) // Forbidden
		b.noErrors()
	})
}

// waitRunOutput waits on a run page for the status and a piece of its output.
func waitRunOutput(b *browser, status, output string) {
	b.t.Helper()
	b.wait("run "+status+" with "+output, fmt.Sprintf(`document.querySelector('[data-run-status]')?.dataset.runStatus === %q && (document.querySelector('[aria-label="run output"]')?.textContent ?? "").includes(%q)`, status, output))
}

// edit clicks a workbench button that sends one edit and waits for the
// revision it makes: the step panel shows the server's document anew.
func edit(b *browser, label string) {
	b.t.Helper()
	var rev int
	b.eval("the revision", `Number(document.querySelector("#bench-h small").textContent.replace("revision ", ""))`, &rev)
	b.click(label)
	b.wait(label+" saved", fmt.Sprintf(`document.querySelector("#bench-h small")?.textContent === "revision %d"`, rev+1))
}

func addCapabilityStep(b *browser, id, capability string) {
	b.t.Helper()
	b.fill("#new-step-id", id)
	b.fill("#new-step-cap", capability)
	b.click("Add capability step")
	b.wait("step "+id, fmt.Sprintf(`!!document.querySelector('[data-step=%q]')`, id))
}

// selectStep opens a step's panel from the step picker (the keyboard's way).
func selectStep(b *browser, id string) {
	b.t.Helper()
	b.fill("#pick-step", id)
	b.wait("the panel of "+id, fmt.Sprintf(`document.querySelector("#step-h")?.textContent.startsWith("Step %s")`, id))
}

// napWorkflow sleeps twice on slow.default: 200 ms, then ms.
func napWorkflow(ms int) string {
	return fmt.Sprintf(`{"name":"nap","start":"first",
	"steps":{"first":{"use":"slow.default.sleep","input":[{"target":"ms","value":200}]},
	         "second":{"use":"slow.default.sleep","input":[{"target":"ms","value":%d}]}},
	"routes":{"first":{"ok":"second","error":"__end__"},"second":{"ok":"__end__","error":"__end__"}}}`, ms)
}

// approvalWorkflow waits for an approval (docs/language.md, 8.8).
const approvalWorkflow = `{"name": "approve_deploy", "start": "ask", "outcomes": ["ok", "rejected"],
 "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}},
 "state_schema": {"type": "object", "properties": {"approved": {"type": "boolean"}, "comment": {"type": "string"}}},
 "output_schema": {"type": "object", "properties": {"approved": {"type": "boolean"}, "comment": {"type": "string"}}},
 "steps": {
   "ask": {"interrupt": {"kind": "approval",
             "request": [{"target": "message", "value": "Approve this deploy?"}, {"target": "title", "path": "input.title"}],
             "request_schema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
             "resume_schema": {"type": "object", "properties": {"approved": {"type": "boolean"}, "comment": {"type": "string"}},
                               "required": ["approved", "comment"]},
             "resume": [{"source": "approved", "target": "state.approved"}, {"source": "comment", "target": "state.comment"}],
             "outcomes": ["submitted", "rejected"]}},
   "no": {"end": {"outcome": "rejected"}}},
 "routes": {"ask": {"submitted": "__end__", "rejected": "no"}}}`

// TestConsoleDocShowsEveryScreenshot checks that docs/console.md shows
// each screenshot the browser test writes, and that the files exist.
func TestConsoleDocShowsEveryScreenshot(t *testing.T) {
	is := is.New(t)
	root := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "console.md"))
	is.NoErr(err)
	for _, name := range consoleScreens {
		is.True(strings.Contains(string(doc), "](console/"+name+".png)")) // docs/console.md shows the screen
		info, err := os.Stat(filepath.Join(root, "docs", "console", name+".png"))
		is.NoErr(err)            // the screenshot is committed
		is.True(info.Size() > 0) // and not empty
	}
}

// outcomeOrder is the outcomes of step's handles on the canvas the page
// shows, from left to right.
func outcomeOrder(b *browser, step string) []string {
	var order []string
	b.eval("the outcome handles of "+step, fmt.Sprintf(`[...document.querySelectorAll('[data-step=%q] [data-outcome]')]
		.sort((x, y) => x.getBoundingClientRect().left - y.getBoundingClientRect().left)
		.map((h) => h.dataset.outcome)`, step), &order)
	return order
}
