package webhooks_test

import (
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/secrets"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/webhooks"
)

var (
	now  = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	body = []byte(`{"ref":"refs/heads/main","commits":[{"id":"abc"}]}`)
)

func generic(secret string, at time.Time) http.Header {
	return http.Header{webhooks.SignatureHeader: {webhooks.SignatureHeaderValue(secret, at, body)}}
}

func github(secret string, payload []byte) http.Header {
	return http.Header{webhooks.GitHubSignatureHeader: {"sha256=" + hex.EncodeToString(webhooks.Sign([]byte(secret), payload))}}
}

func TestSignatures(t *testing.T) {
	current := []store.WebhookSecret{{Secret: "s3cret"}}
	var v webhooks.Verifier
	tests := []struct {
		name   string
		header http.Header
		body   []byte
		want   error
	}{
		{"generic", generic("s3cret", now), body, nil},
		{"generic, sender's clock 4 min ahead", generic("s3cret", now.Add(4*time.Minute)), body, nil},
		{"generic, stale timestamp", generic("s3cret", now.Add(-6*time.Minute)), body, webhooks.ErrStale},
		{"generic, future timestamp", generic("s3cret", now.Add(6*time.Minute)), body, webhooks.ErrStale},
		{"generic, wrong secret", generic("other", now), body, webhooks.ErrMismatch},
		{"generic, body changed", generic("s3cret", now), []byte(`{"ref":"refs/heads/evil"}`), webhooks.ErrMismatch},
		{"generic, no v1", http.Header{webhooks.SignatureHeader: {"t=1"}}, body, webhooks.ErrMalformed},
		{"generic, bad hex", http.Header{webhooks.SignatureHeader: {"t=1,v1=zz"}}, body, webhooks.ErrMalformed},
		{"github", github("s3cret", body), body, nil},
		{"github, wrong secret", github("other", body), body, webhooks.ErrMismatch},
		{"github, no prefix", http.Header{webhooks.GitHubSignatureHeader: {hex.EncodeToString(webhooks.Sign([]byte("s3cret"), body))}}, body, webhooks.ErrMalformed},
		{"unsigned", http.Header{}, body, webhooks.ErrNoSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			err := v.Verify(tt.header, tt.body, current, now)
			is.True(errors.Is(err, tt.want)) // the verdict
		})
	}
}

func TestARotatedSecretVerifiesWithinItsGrace(t *testing.T) {
	is := is.New(t)
	var v webhooks.Verifier
	h := store.Webhook{ID: "h", Secrets: []store.WebhookSecret{{Secret: "old"}}}
	h.Secrets = webhooks.Rotate(h, "new", now, time.Hour)
	is.Equal(len(h.Secrets), 2)
	is.Equal(h.Secrets[0], store.WebhookSecret{Secret: "new"}) // the new one is current

	is.NoErr(v.Verify(generic("new", now), body, h.Secrets, now))                                         // the new secret verifies
	is.NoErr(v.Verify(generic("old", now.Add(59*time.Minute)), body, h.Secrets, now.Add(59*time.Minute))) // the old one within its grace
	is.NoErr(v.Verify(github("old", body), body, h.Secrets, now.Add(59*time.Minute)))                     // in both forms
	late := now.Add(time.Hour)
	is.True(errors.Is(v.Verify(generic("old", late), body, h.Secrets, late), webhooks.ErrMismatch)) // not past it
	is.NoErr(v.Verify(generic("new", late), body, h.Secrets, late))

	// A second rotation after the grace drops the expired secret.
	h.Secrets = webhooks.Rotate(h, "newer", late, time.Hour)
	is.Equal(len(h.Secrets), 2)
	is.Equal(h.Secrets[1].Secret, "new")
}

func TestNewSecretsDiffer(t *testing.T) {
	is := is.New(t)
	a, err := webhooks.NewSecret()
	is.NoErr(err)
	b, err := webhooks.NewSecret()
	is.NoErr(err)
	is.True(a != b)
	is.True(len(a) > 40) // 32 random bytes
}

func TestMapInput(t *testing.T) {
	is := is.New(t)
	header := http.Header{"X-Github-Event": {"push"}}
	whole, err := webhooks.MapInput(nil, body, header)
	is.NoErr(err)
	is.Equal(whole.(map[string]any)["ref"], "refs/heads/main") // the default is the whole body

	m := map[string]string{"ref": "/ref", "first": "/commits/0/id", "event": "header:X-GitHub-Event", "missing": "/nope", "whole": ""}
	is.NoErr(webhooks.CheckInputMap(m))
	got, err := webhooks.MapInput(m, body, header)
	is.NoErr(err)
	obj := got.(map[string]any)
	is.Equal(obj["ref"], "refs/heads/main")
	is.Equal(obj["first"], "abc")
	is.Equal(obj["event"], "push")
	_, present := obj["missing"]
	is.True(!present) // what a pointer does not find is left out
	is.Equal(obj["whole"].(map[string]any)["ref"], "refs/heads/main")

	_, err = webhooks.MapInput(m, []byte("not json"), header)
	is.True(err != nil)
	is.True(webhooks.CheckInputMap(map[string]string{"x": "ref"}) != nil)     // not a pointer
	is.True(webhooks.CheckInputMap(map[string]string{"x": "header:"}) != nil) // no header name
}

func TestASealedWebhookHoldsNoSecretInClear(t *testing.T) {
	is := is.New(t)
	sealer, err := secrets.Ephemeral()
	is.NoErr(err)
	h := store.Webhook{ID: "h", DeploymentID: "d", Secrets: []store.WebhookSecret{{Secret: "whsec_topsecret"}}}
	sealed, err := store.SealWebhook(sealer, h)
	is.NoErr(err)
	is.Equal(sealed.Secrets, nil)
	is.True(sealed.Sealed != "")
	is.True(!strings.Contains(sealed.Sealed, "topsecret"))
	opened, err := store.OpenWebhook(sealer, sealed)
	is.NoErr(err)
	is.Equal(opened, h)
	is.Equal(h.Secrets[0].String(), "WebhookSecret{ExpiresAtMs:0}") // formatting shows no secret
}
