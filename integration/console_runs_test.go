package integration

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// consoleWidths are the window widths each screen of the run test is
// checked and screenshotted at: a desktop's and the narrowest the
// console's layouts hold at (issue 29).
var consoleWidths = []int64{1400, 800}

// consoleRunScreens are the screens TestConsoleRunsAnythingInTheBrowser
// writes, each as <name>-<width>.png.
var consoleRunScreens = []string{"tokenless", "discover", "start-run", "run-live", "runs-running", "run-failed", "deploy-over", "overview"}

func init() {
	for _, name := range consoleRunScreens {
		for _, w := range consoleWidths {
			consoleScreens = append(consoleScreens, fmt.Sprintf("%s-%d", name, w))
		}
	}
}

// TestConsoleRunsAnythingInTheBrowser drives the console of a server
// without tokens (issue 29, item 5) in a real headless Chromium: it opens
// without a token prompt; a run of a workflow with a required input is
// started from the deployment's form, watched while it runs with its
// live duration, and found by filtering the run list to running runs; a
// failed run's header shows its error; deploying over a deployment asks
// first and shows what changes. Each screen holds its layout at 1400 and
// 800 px (no horizontal overflow, no collapsed column) and is
// screenshotted at both.
func TestConsoleRunsAnythingInTheBrowser(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary and Chromium")
	}
	is := is.New(t)
	chromium := newChromium(t)
	dir := t.TempDir()
	// broken.default's command does not exist: the Health badge says the
	// server is degraded while it fails.
	broken := stdioSource("broken.default", filepath.Join(dir, "no-such-mcp-server"))
	cfg := writeServerConfig(t, dir, config.Server{Sources: []config.Connection{stdioSource("slow.default", fakeMCP), broken}})
	pr := startProcess(t, cfg, "mcpflow.log")
	api, err := client.Dial(testContext(t), pr.url)
	is.NoErr(err)
	t.Cleanup(func() { _ = api.Close() })
	base := "http://" + strings.TrimSuffix(strings.TrimPrefix(pr.url, "ws://"), "/ws")

	nap := deployDraft(t, api, "nap_for", napForWorkflow, "slow.default")
	fails := deployDraft(t, api, "fails", failingWorkflow, "slow.default")
	done := startRun(t, api, nap, p.Object{"ms": 1})
	failed := startRun(t, api, fails, nil)
	for run, status := range map[string]string{done: "completed", failed: "failed"} {
		poll.For(t, "run "+run+" "+status, 15*time.Second, func() bool {
			r, err := api.InspectRun(testContext(t), run)
			return err == nil && r.Status == status
		})
	}

	b := newTab(t, chromium, base)
	b.open("")
	b.wait("the screens, with no token prompt", `!!document.querySelector('nav[aria-label="Screens"]')`)
	is.True(!b.has("#token"))       // a server without tokens asks for none
	is.True(!b.hasText("Sign out")) // nor offers to sign out of nothing
	b.wait("every scope", `document.querySelector("[data-scopes]")?.dataset.scopes === "read run author admin"`)
	b.wait("the overview's figures", `document.querySelector('[data-count="failed"]')?.textContent === "1"`)
	b.wait("the Health badge degraded", `document.querySelector("[data-health]")?.textContent === "status: degraded (1 of 2 sources failing)"`)
	b.wait("the failing source named", `document.querySelector('[aria-label="Failing sources"]')?.textContent.includes("broken.default")`)
	b.screens("tokenless")

	b.route("discover/slow.default.sleep")
	b.wait("the sleep contract", `document.querySelector("#cap-h")?.textContent === "slow.default.sleep"`)
	b.screens("discover")

	// Start a run from the form drawn from the input schema.
	b.route("artifacts/deployment/" + nap)
	b.wait("the run form, its input marked required", `!!document.querySelector('[data-form="run input"] .req')`)
	b.wait("no start without the required input", `document.querySelector('[aria-label="run input problems"]')?.textContent.includes("ms is required")`)
	is.True(!b.hasEnabled("Start a run")) // the form holds back a run that would fail with -32602
	b.fill(`[data-form="run input"] input[type="number"]`, "120000")
	b.wait("the input accepted", `!document.querySelector('[aria-label="run input problems"]')`)
	b.screens("start-run")
	b.click("Start a run")

	// The page follows the run: running, the step lit, the duration live.
	b.wait("the run page of a running run", `document.querySelector("[data-run-status]")?.dataset.runStatus === "running" && !!document.querySelector('.timeline li[data-node="nap"][data-state="running"]')`)
	var live string
	b.eval("the run's id", `location.hash.replace("#/runs/", "")`, &live)
	b.wait("the duration counting", `Number(document.querySelector("[data-run-duration] .live-duration")?.dataset.durationMs) >= 1500`)
	var duration string
	b.eval("the duration", `document.querySelector("[data-run-duration]").textContent`, &duration)
	is.True(strings.HasSuffix(duration, " s")) // read as seconds, not a raw stamp
	var header string
	b.eval("the header", `document.querySelector('[aria-label="Run details"]').textContent`, &header)
	is.True(!rfc3339.MatchString(header)) // no raw RFC 3339 stamp
	b.screens("run-live")

	// The run list filtered to running runs holds that run alone.
	b.route("runs")
	b.wait("all three runs", `document.querySelectorAll("tr[data-run]").length === 3`)
	b.fill("#runs-status", "running")
	b.wait("the running run alone", fmt.Sprintf(`document.querySelectorAll("tr[data-run]").length === 1 && !!document.querySelector('tr[data-run=%q][data-status="running"] .live-duration')`, live))
	b.screens("runs-running")
	b.fill("#runs-status", "")
	b.fill("#runs-q", (failed)[len(failed)-6:])
	b.wait("the failed run found by a part of its id", fmt.Sprintf(`document.querySelectorAll("tr[data-run]").length === 1 && !!document.querySelector('tr[data-run=%q]')`, failed))

	// A failed run's header says why, and shows no output box of null.
	b.route("runs/" + failed)
	b.wait("the failure in the header", `document.querySelector('[aria-label="Run error"]')?.textContent.includes("the upstream said no")`)
	is.True(!b.has(`[aria-label="run output"]`)) // no output box saying null
	b.screens("run-failed")

	// Deploying another version over a deployment asks first, and shows
	// what changes: the version and the tool description agents see.
	b.route("workbench/nap_for_ws")
	b.wait("a valid draft", `document.querySelector("#bench-h .status")?.textContent === "valid"`)
	b.fill("#a-version", "2")
	b.fill("#a-title", "Nap for a while")
	b.click("Save artifact")
	b.wait("the deploy asks first", `!!document.querySelector('[aria-label="Deploy over an existing deployment"]')`)
	var change string
	b.eval("what changes", `document.querySelector('[aria-label="What changes"]').textContent`, &change)
	// The descriptions are the server's: what its dry run of the same save answers.
	now, err := api.InspectDeployment(testContext(t), nap)
	is.NoErr(err)
	var dry p.SaveDeploymentResult
	is.NoErr(api.Call(testContext(t), p.MethodDeploymentsSave, p.Object{"dry_run": true, "deployment": p.Object{
		"id": nap, "artifact_id": "nap_for", "artifact_version": 2, "bindings": now.Bindings}}, &dry))
	is.True(dry.Change != nil && dry.Change.Previous != nil)
	is.True(strings.Contains(change, dry.Change.Previous.ToolDescription))           // the server's description now
	is.True(strings.Contains(change, dry.Change.Next.ToolDescription))               // and after
	is.True(strings.Contains(change, "nap_for v1"))                                  // the version now
	is.True(strings.Contains(change, "nap_for v2"))                                  // and after
	is.True(strings.Contains(change, `Runs the mcpflow workflow "nap_for"`))         // the description agents see now
	is.True(strings.Contains(change, `Runs the mcpflow workflow "Nap for a while"`)) // and after
	b.screens("deploy-over")
	b.click("Deploy v2 over v1")
	b.wait("deployed", `document.querySelector('[aria-label="Deploy"]')?.textContent.includes("Deployed")`)
	d, err := api.InspectDeployment(testContext(t), nap)
	is.NoErr(err)
	is.Equal(d.ArtifactVersion, 2) // the confirmed deploy went through

	_, err = api.CancelRun(testContext(t), p.CancelRunParams{RunID: live})
	is.NoErr(err)
	b.route("overview")
	b.wait("the cancelled run counted", `document.querySelector('[data-count="running"]')?.textContent === "0"`)
	b.screens("overview")
	b.noErrors()
}

// startRun starts a run of deployment without waiting for it.
func startRun(t *testing.T, c *client.Client, deployment string, input p.Object) string {
	t.Helper()
	run, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment, WorkflowInput: input, Wait: ptr(false)})
	is.New(t).NoErr(err)
	return *run.RunID
}

// screens checks the page's layout at each of consoleWidths and takes a
// screenshot at each, as <name>-<width>.png; the window is left at the
// first width.
func (b *browser) screens(name string) {
	b.t.Helper()
	for _, w := range consoleWidths {
		b.do(fmt.Sprintf("a %d px window", w), chromedp.EmulateViewport(w, 900))
		var problems []string
		b.eval("the layout at "+fmt.Sprint(w), `new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => {
			const out = [];
			if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push("the page is " + document.documentElement.scrollWidth + " px wide in a " + window.innerWidth + " px window");
			for (const t of document.querySelectorAll("table")) {
				const scrolls = t.closest(".table-wrap");
				for (const th of t.querySelectorAll("thead th")) {
					const r = th.getBoundingClientRect();
					if (th.textContent.trim() !== "" && r.width < 24) out.push("column " + th.textContent + " is " + r.width + " px wide");
					if (!scrolls && r.right > window.innerWidth + 1) out.push("column " + th.textContent + " is cut off");
				}
			}
			resolve(out);
		})))`, &problems)
		if len(problems) > 0 {
			b.shot("failure")
			b.t.Fatalf("%s at %d px: %s", name, w, strings.Join(problems, "; "))
		}
		b.shot(fmt.Sprintf("%s-%d", name, w))
	}
	b.do("the first width again", chromedp.EmulateViewport(consoleWidths[0], 900))
}

// hasEnabled is whether a visible button reading label may be pressed.
func (b *browser) hasEnabled(label string) bool {
	b.t.Helper()
	var n int
	b.eval("look for "+label, fmt.Sprintf(`[...document.querySelectorAll("button")].filter(e => e.offsetParent !== null && !e.disabled && e.textContent.trim() === %q).length`, label), &n)
	return n > 0
}

// rfc3339 finds a raw timestamp as the API sends it.
var rfc3339 = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d`)

// napForWorkflow sleeps on slow.default for its required input ms.
const napForWorkflow = `{"name":"nap_for","start":"nap",
 "input_schema":{"type":"object","properties":{"ms":{"type":"integer","description":"How long to sleep, in milliseconds."}},"required":["ms"]},
 "steps":{"nap":{"use":"slow.default.sleep","input":[{"target":"ms","path":"input.ms"}]}},
 "routes":{"nap":{"ok":"__end__","error":"__end__"}}}`

// failingWorkflow calls a tool that fails and ends the run failed, with
// the reason as its error.
const failingWorkflow = `{"name":"fails","start":"call",
 "steps":{"call":{"use":"slow.default.fail","input":[{"target":"message","value":"the upstream said no"}]},
          "tool_error":{"use":"wf.std.runtime_error","input":[{"target":"message","value":"the upstream said no"}]}},
 "routes":{"call":{"ok":"__end__","error":"tool_error"},"tool_error":{"ok":"__end__"}}}`
