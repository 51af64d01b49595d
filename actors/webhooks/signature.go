package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The headers a delivery is signed and named by.
const (
	SignatureHeader       = "X-Mcpflow-Signature"
	DeliveryHeader        = "X-Mcpflow-Delivery"
	GitHubSignatureHeader = "X-Hub-Signature-256"
	GitHubDeliveryHeader  = "X-GitHub-Delivery"
)

// DefaultTolerance is how far a generic signature's timestamp may be from
// now, either way.
const DefaultTolerance = 5 * time.Minute

// Why a signature is refused. Each says what was wrong with the request,
// never what the secret or the expected signature is.
var (
	ErrNoSignature = errors.New("the request is not signed: send " + SignatureHeader + " or " + GitHubSignatureHeader)
	ErrMalformed   = errors.New("the signature header is malformed")
	ErrStale       = errors.New("the signature's timestamp is outside the tolerance")
	ErrMismatch    = errors.New("the signature does not match")
)

// Verifier checks deliveries' signatures.
type Verifier struct {
	// Tolerance bounds the generic form's timestamp; DefaultTolerance
	// when zero.
	Tolerance time.Duration
}

// Verify checks that body, with header, is signed by one of secrets
// valid at now: the generic form, X-Mcpflow-Signature: t=<unix
// seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>"> (several v1 are allowed,
// one must match), with t within the tolerance; else GitHub's,
// X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of body>, which carries no
// timestamp (the delivery id dedup is its replay protection). Every
// comparison is constant-time.
func (v Verifier) Verify(header http.Header, body []byte, secrets []store.WebhookSecret, now time.Time) error {
	if sig := header.Get(SignatureHeader); sig != "" {
		return v.verifyGeneric(sig, body, secrets, now)
	}
	if sig := header.Get(GitHubSignatureHeader); sig != "" {
		hexSig, ok := strings.CutPrefix(strings.TrimSpace(sig), "sha256=")
		want, err := hex.DecodeString(hexSig)
		if !ok || err != nil || len(want) != sha256.Size {
			return ErrMalformed
		}
		return matchAny(secrets, now, body, [][]byte{want})
	}
	return ErrNoSignature
}

func (v Verifier) verifyGeneric(sig string, body []byte, secrets []store.WebhookSecret, now time.Time) error {
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(sig, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrMalformed
		}
		switch k {
		case "t":
			ts = val
		case "v1":
			b, err := hex.DecodeString(val)
			if err != nil || len(b) != sha256.Size {
				return ErrMalformed
			}
			sigs = append(sigs, b)
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 || len(sigs) > 8 {
		return ErrMalformed
	}
	tolerance := v.Tolerance
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if d := now.Sub(time.Unix(t, 0)); d > tolerance || d < -tolerance {
		return ErrStale
	}
	signed := make([]byte, 0, len(ts)+1+len(body))
	signed = append(append(append(signed, ts...), '.'), body...)
	return matchAny(secrets, now, signed, sigs)
}

// matchAny reports whether one of sigs is the HMAC-SHA256 of msg under
// one of the secrets valid at now. It tries every pair, so that the time
// it takes does not say which matched.
func matchAny(secrets []store.WebhookSecret, now time.Time, msg []byte, sigs [][]byte) error {
	matched := false
	for _, s := range secrets {
		if !s.Valid(now) {
			continue
		}
		mac := Sign([]byte(s.Secret), msg)
		for _, sig := range sigs {
			if hmac.Equal(mac, sig) {
				matched = true
			}
		}
	}
	if !matched {
		return ErrMismatch
	}
	return nil
}

// Sign is the HMAC-SHA256 of msg under secret.
func Sign(secret, msg []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write(msg)
	return h.Sum(nil)
}

// SignatureHeaderValue is the X-Mcpflow-Signature of body under secret at
// t: what a sender computes (and the tests do).
func SignatureHeaderValue(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(Sign([]byte(secret), append([]byte(ts+"."), body...)))
}

// DeliveryID is the delivery's id from its headers ("" for none).
func DeliveryID(header http.Header) string {
	if id := header.Get(DeliveryHeader); id != "" {
		return id
	}
	return header.Get(GitHubDeliveryHeader)
}
