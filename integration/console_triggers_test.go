package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/webhooks"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

func init() {
	for _, w := range consoleWidths {
		consoleScreens = append(consoleScreens, fmt.Sprintf("triggers-%d", w))
	}
}

// TestConsoleShowsTriggersInTheBrowser drives the console's Triggers
// page (issue 31) in a real headless Chromium, against the real binary:
// a schedule created over the API shows its next five fires as inspect
// answers them, fires from the page's "Trigger now" with its run linked,
// and is paused from the page with a note; a webhook shows its URL and
// its recent deliveries, a correctly signed one started with its run
// linked and a badly signed one rejected with its reason; a rotated
// secret is shown once, and is the one that verifies. A read token sees
// the same page without a control.
func TestConsoleShowsTriggersInTheBrowser(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary and Chromium")
	}
	is := is.New(t)
	chromium := newChromium(t)
	pr := startProcess(t, writeServerConfig(t, t.TempDir(), config.Server{Access: &config.Access{Tokens: []config.Token{adminToken, readToken}}}), "mcpflow.log")
	c, err := client.DialToken(testContext(t), pr.url, adminToken.Token)
	is.NoErr(err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := testContext(t)
	base := "http://" + strings.TrimSuffix(strings.TrimPrefix(pr.url, "ws://"), "/ws")
	saveArtifact(t, c, "echo", echoDraft, []string{"ok"})
	_, err = c.SaveDeployment(ctx, p.Object{"id": "echo", "artifact_id": "echo", "artifact_version": 1, "bindings": []any{}})
	is.NoErr(err)

	// An hourly interval: its next fires are known and none comes during the test.
	var sched p.ScheduleResult
	is.NoErr(c.Call(ctx, p.MethodSchedulesCreate, p.Object{"schedule": p.Object{"id": "hourly", "deployment_id": "echo",
		"workflow_input": p.Object{"ref": "scheduled"}, "spec": p.Object{"interval_seconds": 3600}}}, &sched))
	is.Equal(len(sched.Schedule.NextFireTimes), 5)

	var hook p.WebhookWithSecret
	is.NoErr(c.Call(ctx, p.MethodWebhooksCreate, p.CreateWebhookParams{Webhook: p.WebhookSpec{ID: "on-push", DeploymentID: "echo"}}, &hook))
	url := base + hook.Webhook.Path
	body := []byte(`{"ref":"refs/heads/main"}`)
	signed := func(secret, delivery string) http.Header {
		return http.Header{"X-Mcpflow-Signature": {webhooks.SignatureHeaderValue(secret, time.Now(), body)}, "X-Mcpflow-Delivery": {delivery}}
	}
	status, answer := postHook(t, url, body, signed(hook.Secret, "d-good"))
	is.Equal(status, http.StatusAccepted)
	runID, _ := answer["run_id"].(string)
	is.True(runID != "")
	status, _ = postHook(t, url, body, signed("whsec_wrong", "d-bad"))
	is.Equal(status, http.StatusUnauthorized)

	b := newTab(t, chromium, base)
	b.open("triggers")
	b.signIn(adminToken.Token)
	b.wait("the Triggers link current", `document.querySelector('nav[aria-label="Screens"] a[aria-current="page"]')?.textContent === "Triggers"`)

	// The schedule's next fires are those inspect answers.
	b.wait("the schedule", `!!document.querySelector('[data-schedule="hourly"][data-paused="false"]')`)
	var fires []int64
	b.eval("the next fires shown", `[...document.querySelectorAll('[aria-label="Next fires of hourly"] li')].map((li) => Number(li.dataset.fire))`, &fires)
	is.Equal(fires, sched.Schedule.NextFireTimes)
	var spec string
	b.eval("the spec shown", `document.querySelector('[data-schedule="hourly"] [data-spec]').textContent`, &spec)
	is.Equal(spec, "every 1 h")
	var countdowns []string
	b.eval("the countdowns", `[...document.querySelectorAll('[aria-label="Next fires of hourly"] li small')].map((s) => s.textContent)`, &countdowns)
	is.Equal(len(countdowns), 5)
	is.True(strings.HasPrefix(countdowns[0], "in ")) // the first fire is to come

	// Both deliveries: the accepted one with its run, the rejected one with why.
	b.wait("both deliveries", `document.querySelectorAll('[aria-label="Recent deliveries of on-push"] tbody tr').length === 2`)
	b.wait("the accepted delivery with its run", fmt.Sprintf(`(() => {
		const tr = document.querySelector('[aria-label="Recent deliveries of on-push"] tr[data-delivery-outcome="started"]');
		return !!tr && tr.textContent.includes("d-good") && tr.querySelector("a")?.getAttribute("href") === %q && tr.textContent.includes("202");
	})()`, "#/runs/"+runID))
	b.wait("the rejected delivery with its reason", `(() => {
		const tr = document.querySelector('[aria-label="Recent deliveries of on-push"] tr[data-delivery-outcome="bad_signature"]');
		return !!tr && tr.textContent.includes("rejected: bad signature") && tr.querySelector("[data-reason]")?.textContent === "the signature does not match" && tr.textContent.includes("401") && !tr.textContent.includes("d-bad");
	})()`)
	var hookURL string
	b.eval("the webhook's URL", `document.querySelector('[data-webhook="on-push"] [data-copy-value="URL"]').textContent`, &hookURL)
	is.Equal(hookURL, url)
	b.screens("triggers")

	// Trigger now fires a run, linked as the last fire.
	b.click("Trigger now")
	b.wait("the last fire with its run", `!!document.querySelector('[data-schedule="hourly"] [data-last-fire] a[href^="#/runs/"]')`)
	var fired p.Schedule
	is.NoErr(c.Call(ctx, p.MethodSchedulesInspect, p.Object{"schedule_id": "hourly"}, &fired))
	is.True(fired.LastFire != nil && fired.LastFire.RunID != "")
	b.wait("the fired run's link", fmt.Sprintf(`!!document.querySelector('[data-schedule="hourly"] [data-last-fire] a[href=%q]')`, "#/runs/"+fired.LastFire.RunID))

	// Pause from the page, with a note.
	b.fill("#note-hourly", "db migration")
	b.click("Pause")
	b.wait("paused, with its note and no next fires", `(() => {
		const s = document.querySelector('[data-schedule="hourly"][data-paused="true"]');
		return !!s && s.querySelector("[data-paused-note]")?.textContent === "Paused: db migration" && !s.querySelector('[aria-label="Next fires of hourly"]');
	})()`)
	var paused p.Schedule
	is.NoErr(c.Call(ctx, p.MethodSchedulesInspect, p.Object{"schedule_id": "hourly"}, &paused))
	is.True(paused.Paused)
	is.Equal(paused.Note, "db migration")
	is.True(b.hasText("Unpause")) // the page offers the way back

	// A rotated secret is shown once, and it is the one that verifies.
	b.eval("accept the confirmation", `window.confirm = () => true`, nil)
	b.click("Rotate secret")
	b.wait("the new secret", `document.querySelector('[aria-label="New secret of on-push"] [data-copy-value="secret"]')?.textContent.startsWith("whsec_")`)
	var secret string
	b.eval("the new secret", `document.querySelector('[aria-label="New secret of on-push"] [data-copy-value="secret"]').textContent`, &secret)
	is.True(secret != hook.Secret)
	status, _ = postHook(t, url, body, signed(secret, "d-rotated"))
	is.Equal(status, http.StatusAccepted)
	b.wait("the third delivery", `document.querySelectorAll('[aria-label="Recent deliveries of on-push"] tbody tr').length === 3`)
	b.noErrors()

	// A read token sees the schedule and the deliveries, and no control.
	r := newTab(t, chromium, base)
	r.open("triggers")
	r.signIn(readToken.Token)
	r.wait("the schedule and the deliveries", `!!document.querySelector('[data-schedule="hourly"] [data-paused-note]') && document.querySelectorAll('[aria-label="Recent deliveries of on-push"] tbody tr').length === 3`)
	for _, label := range []string{"Unpause", "Trigger now", "Delete", "Rotate secret", "Create schedule", "Create webhook"} {
		is.True(!r.hasText(label)) // not drawn for a read token
	}
	is.True(!r.has("#note-hourly"))
	r.noErrors()
}
