package integration

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/webhooks"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// echoDraft answers its whole input as {got}: what a webhook mapped.
// deployEcho saves echoDraft as artifact echo and deploys it as echo.
func deployEcho(t *testing.T, c *client.Client) {
	t.Helper()
	saveArtifact(t, c, "echo", echoDraft, []string{"ok"})
	_, err := c.SaveDeployment(testContext(t), p.Object{"id": "echo", "artifact_id": "echo", "artifact_version": 1, "bindings": []any{}})
	is.New(t).NoErr(err)
}

const echoDraft = `{"name":"echo","start":"take","outcomes":["ok"],
	"input_schema":{"type":"object","properties":{"ref":{"type":"string"},"repo":{"type":"string"},"event":{"type":"string"}},"required":["ref"]},
	"state_schema":{"type":"object","properties":{"got":{"type":"object"}}},
	"output_schema":{"type":"object","properties":{"got":{"type":"object"}}},
	"steps":{"take":{"use":"wf.std.constant","input":[{"target":"value","path":"input"}],"output":[{"source":"value","target":"state.got"}]}},
	"routes":{"take":{"ok":"__end__"}}}`

// hookBodyBound is the edge's body bound of the webhook test: small, so
// that the server reads a body twice its size whole before it answers
// 413 (net/http drains up to 256 KiB), and the client always reads the
// answer rather than a reset.
const hookBodyBound = 64 << 10

// bodyMarker is in the body of every refused delivery: no log line may
// hold it.
const bodyMarker = "body-marker-7f3e1c"

// TestSignedWebhooksStartRunsThroughTheRealBinary: a webhook created over
// the API starts a run, started_by webhook:<id>, with the input its map
// takes from a correctly signed body and header; a bad signature, a stale
// timestamp and a replayed delivery id each start nothing (401, 401,
// 409), and leave nothing of the body in the log; GitHub's signature of
// a push event fixture is accepted; each refusal is an admin event and
// every delivery is counted by outcome; a rotated secret and the old one
// within its grace verify; a body past the edge's bound is 413 and a
// burst past the hook's rate 429.
func TestSignedWebhooksStartRunsThroughTheRealBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	t.Parallel()
	is := is.New(t)
	pr := startProcess(t, writeServerConfig(t, t.TempDir(), config.Server{Edge: &config.Edge{MaxMessageBytes: hookBodyBound}}), "webhooks.log")
	c := dialURL(t, pr.url)
	ctx := testContext(t)
	deployEcho(t, c)

	var created p.WebhookWithSecret
	is.NoErr(c.Call(ctx, p.MethodWebhooksCreate, p.CreateWebhookParams{Webhook: p.WebhookSpec{ID: "on-push", DeploymentID: "echo",
		InputMap: map[string]string{"ref": "/ref", "repo": "/repository/full_name", "event": "header:X-GitHub-Event"}}}, &created))
	secret := created.Secret
	is.True(strings.HasPrefix(secret, "whsec_"))
	is.Equal(created.Webhook.Path, "/hooks/on-push")
	var inspected p.Webhook
	is.NoErr(c.Call(ctx, p.MethodWebhooksInspect, p.WebhookIDParams{WebhookID: "on-push"}, &inspected))
	raw, err := json.Marshal(inspected)
	is.NoErr(err)
	is.True(!strings.Contains(string(raw), secret)) // inspect never shows the secret

	hook := strings.Replace(pr.url, "ws://", "http://", 1)
	hook = strings.TrimSuffix(hook, "/ws") + "/hooks/on-push"
	body := []byte(`{"ref":"refs/heads/main","repository":{"full_name":"acme/app"},"note":"` + bodyMarker + `"}`)
	signed := func(secret string, at time.Time, delivery string) http.Header {
		return http.Header{"X-Mcpflow-Signature": {webhooks.SignatureHeaderValue(secret, at, body)},
			"X-Mcpflow-Delivery": {delivery}, "X-Github-Event": {"push"}}
	}

	// Correctly signed: 202 with the run, which got the mapped input.
	status, answer := postHook(t, hook, body, signed(secret, time.Now(), "d-1"))
	is.Equal(status, http.StatusAccepted)
	runID, _ := answer["run_id"].(string)
	is.True(runID != "")
	run := settled(t, c, runID)
	is.Equal(run.Status, "completed")
	is.Equal(run.StartedBy, "webhook:on-push")
	is.Equal(run.Output["got"], map[string]any{"ref": "refs/heads/main", "repo": "acme/app", "event": "push"})

	// Each of these starts nothing.
	status, _ = postHook(t, hook, body, signed("whsec_wrong", time.Now(), "d-2"))
	is.Equal(status, http.StatusUnauthorized) // a bad signature
	status, _ = postHook(t, hook, body, signed(secret, time.Now().Add(-10*time.Minute), "d-3"))
	is.Equal(status, http.StatusUnauthorized) // a stale timestamp
	status, _ = postHook(t, hook, body, signed(secret, time.Now(), "d-1"))
	is.Equal(status, http.StatusConflict) // a replayed delivery id
	status, _ = postHook(t, hook, body, http.Header{})
	is.Equal(status, http.StatusUnauthorized) // no signature
	status, _ = postHook(t, strings.Replace(hook, "on-push", "nope", 1), body, signed(secret, time.Now(), "d-4"))
	is.Equal(status, http.StatusNotFound) // an unknown hook
	is.Equal(len(listedRuns(t, c)), 1)    // only the first delivery started a run

	// The webhook's log shows each, newest first: the run started, each
	// refusal's outcome, status and reason, the delivery id only where
	// the signature verified, nothing of the body.
	var logged p.Webhook
	is.NoErr(c.Call(ctx, p.MethodWebhooksInspect, p.WebhookIDParams{WebhookID: "on-push"}, &logged))
	var got []string
	for _, d := range logged.RecentDeliveries {
		got = append(got, fmt.Sprintf("%s %d %s %s", d.Outcome, d.Status, d.DeliveryID, d.RunID))
		is.True(d.Outcome == "started" || d.Reason != "") // a refusal says why
	}
	is.Equal(got, []string{"unsigned 401  ", "replayed 409 d-1 ", "stale 401  ", "bad_signature 401  ", "started 202 d-1 " + runID})
	raw, err = json.Marshal(logged)
	is.NoErr(err)
	is.True(!strings.Contains(string(raw), bodyMarker) && !strings.Contains(string(raw), secret)) // nor the body, nor the secret

	// GitHub's signature over a push event's payload.
	push, err := os.ReadFile(filepath.Join("testdata", "github_push.json"))
	is.NoErr(err)
	status, answer = postHook(t, hook, push, http.Header{
		"X-Hub-Signature-256": {"sha256=" + hex.EncodeToString(webhooks.Sign([]byte(secret), push))},
		"X-Github-Delivery":   {"72d3162e-cc78-11e3-81ab-4c9367dc0958"}, "X-Github-Event": {"push"},
	})
	is.Equal(status, http.StatusAccepted)
	run = settled(t, c, answer["run_id"].(string))
	is.Equal(run.Output["got"], map[string]any{"ref": "refs/heads/main", "repo": "Codertocat/Hello-World", "event": "push"})
	is.Equal(len(listedRuns(t, c)), 2)

	// Every refusal is an admin event, without the body.
	var events p.ListAdminEventsResult
	is.NoErr(c.Call(ctx, p.MethodAdminEventsList, p.Object{}, &events))
	var outcomes []string
	for _, e := range events.Events {
		if e.Kind == "webhook_delivery_rejected" {
			outcomes = append(outcomes, e.Payload["outcome"].(string))
			raw, err := json.Marshal(e)
			is.NoErr(err)
			is.True(!strings.Contains(string(raw), bodyMarker)) // nothing of the body
		}
	}
	is.Equal(outcomes, []string{"bad_signature", "stale", "replayed", "unsigned"}) // an unknown hook is only counted
	metrics := scrapeMetrics(t, pr.url)
	started, _ := metrics.Value("mcpflow_webhook_deliveries_total", "outcome", "started")
	is.Equal(started, 2.0) // deliveries are counted by outcome
	replayed, _ := metrics.Value("mcpflow_webhook_deliveries_total", "outcome", "replayed")
	is.Equal(replayed, 1.0)
	unknown, _ := metrics.Value("mcpflow_webhook_deliveries_total", "outcome", "unknown_hook")
	is.Equal(unknown, 1.0)

	// Rotated: the new secret and, within the grace, the old one verify.
	var rotated p.WebhookWithSecret
	is.NoErr(c.Call(ctx, p.MethodWebhooksRotateSecret, p.RotateWebhookSecretParams{WebhookID: "on-push"}, &rotated))
	is.True(rotated.Secret != secret)
	is.True(rotated.Webhook.PreviousSecretExpiresAtMs != nil)
	status, _ = postHook(t, hook, body, signed(rotated.Secret, time.Now(), "d-5"))
	is.Equal(status, http.StatusAccepted)
	status, _ = postHook(t, hook, body, signed(secret, time.Now(), "d-6"))
	is.Equal(status, http.StatusAccepted)

	// A start the method table refuses (the input lacks its required
	// ref) is 422 and releases the delivery id: the sender's retry, fixed,
	// is taken.
	noRef := []byte(`{"repository":{"full_name":"acme/app"}}`)
	status, answer = postHook(t, hook, noRef, http.Header{"X-Mcpflow-Signature": {webhooks.SignatureHeaderValue(rotated.Secret, time.Now(), noRef)},
		"X-Mcpflow-Delivery": {"d-7"}})
	is.Equal(status, http.StatusUnprocessableEntity)
	t.Logf("refused start: %v", answer["error"])
	status, _ = postHook(t, hook, body, signed(rotated.Secret, time.Now(), "d-7"))
	is.Equal(status, http.StatusAccepted)

	// Past the edge's body bound: 413; past the hook's rate: 429.
	huge := bytes.Repeat([]byte("x"), 2*hookBodyBound)
	status, _ = postHook(t, hook, huge, http.Header{})
	is.Equal(status, http.StatusRequestEntityTooLarge)
	limited := false
	for range 200 { // all 200 pass only if they take 18 s: the bucket holds 20 and refills 10 a second
		if status, _ := postHook(t, hook, body, http.Header{}); status == http.StatusTooManyRequests {
			limited = true
			break
		}
	}
	is.True(limited) // a burst past the rate is refused
	is.NoErr(c.Call(ctx, p.MethodWebhooksInspect, p.WebhookIDParams{WebhookID: "on-push"}, &logged))
	is.Equal(logged.RecentDeliveries[0].Outcome, "rate_limited")    // the flood's refusal is logged
	is.True(len(logged.RecentDeliveries) <= store.RecentDeliveries) // and the log bounded
	is.Equal(len(listedRuns(t, c)), 5)

	logs, err := os.ReadFile(pr.logs)
	is.NoErr(err)
	is.True(!bytes.Contains(logs, []byte(bodyMarker))) // nothing of a body logged
	is.True(!bytes.Contains(logs, []byte(secret)))     // nor a secret
}

// postHook sends body to url with header and answers the status and the JSON
// answer.
func postHook(t *testing.T, url string, body []byte, header http.Header) (int, map[string]any) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	req, err := http.NewRequestWithContext(testContext(t), http.MethodPost, url, bytes.NewReader(body))
	is.NoErr(err)
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	defer resp.Body.Close()
	var answer map[string]any
	is.NoErr(json.NewDecoder(resp.Body).Decode(&answer))
	return resp.StatusCode, answer
}

// listedRuns lists the runs c's server holds.
func listedRuns(t *testing.T, c *client.Client) []p.RunSummary {
	t.Helper()
	listed, err := c.ListRuns(testContext(t), p.ListRunsParams{})
	is.New(t).NoErr(err)
	return listed.Runs
}
