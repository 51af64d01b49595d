package hooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/webhooks"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/hooks"
	"github.com/mcpflow/mcpflow/fakes"
)

// TestEachDeliveryIsLogged: a started delivery is logged with its
// delivery id and run; a refused one with its outcome, status and reason,
// its delivery id only once the signature verified; of a flood past the
// rate, the first refusal only; a delivery to no webhook writes nothing.
// Nothing of a body or of the secret is kept.
func TestEachDeliveryIsLogged(t *testing.T) {
	is := is.New(t)
	st := &fakes.DeliveryLogSpy{Memory: store.NewMemory()}
	const secret = "whsec_test-secret"
	is.NoErr(st.CreateWebhook(t.Context(), store.Webhook{ID: "on-push", DeploymentID: "ci", Secrets: []store.WebhookSecret{{Secret: secret}}}))
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	h := hooks.New(hooks.Options{Store: st, As: func(access.Principal) hooks.Caller { return fakes.Starter{RunID: "run_1"} },
		Rate: 1, Burst: 3, Now: func() time.Time { return now }}) // the clock stands still: no token comes back
	body := []byte(`{"ref":"refs/heads/main","note":"body-marker-5b1d"}`)
	post := func(hook, sig, delivery string) int {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/hooks/"+hook, bytes.NewReader(body))
		req.SetPathValue("id", hook)
		req.Header.Set("X-Mcpflow-Signature", sig)
		req.Header.Set("X-Mcpflow-Delivery", delivery)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	good := webhooks.SignatureHeaderValue(secret, now, body)
	bad := webhooks.SignatureHeaderValue("whsec_wrong", now, body)

	is.Equal(post("on-push", good, "d-1"), http.StatusAccepted)
	is.Equal(post("on-push", bad, "d-2"), http.StatusUnauthorized)
	is.Equal(post("on-push", good, "d-1"), http.StatusConflict)
	for range 3 {
		is.Equal(post("on-push", good, "d-3"), http.StatusTooManyRequests) // past the burst of 3
	}
	is.Equal(post("nope", good, "d-4"), http.StatusNotFound)

	got, err := st.RecentDeliveries(t.Context(), "on-push")
	is.NoErr(err)
	var lines []string
	for _, d := range got {
		is.Equal(d.ReceivedAtMs, now.UnixMilli())
		lines = append(lines, fmt.Sprintf("%s %d %q %q %q", d.Outcome, d.Status, d.DeliveryID, d.RunID, d.Reason))
	}
	is.Equal(lines, []string{
		`rate_limited 429 "" "" "too many deliveries to this webhook; retry later"`, // the flood's first refusal only
		`replayed 409 "d-1" "" "this delivery id was taken already: its run was started once"`,
		`bad_signature 401 "" "" "the signature does not match"`, // no delivery id: the signature did not verify
		`started 202 "d-1" "run_1" ""`,
	})
	is.Equal(st.Logged(), []string{"on-push", "on-push", "on-push", "on-push"}) // the 404 wrote nothing
	raw, err := json.Marshal(got)
	is.NoErr(err)
	is.True(!strings.Contains(string(raw), "body-marker-5b1d") && !strings.Contains(string(raw), secret)) // nothing of the body, nor the secret
}
