package mcpface

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// requestState is what a 2026-era client carries from an input_required
// answer to its retry: which run waits at which interrupt, for whom, until
// when. It is signed, so a client can neither forge nor alter it.
type requestState struct {
	Principal string `json:"p"`
	RunID     string `json:"r"`
	Interrupt string `json:"i"`
	// Cursor is the run's last event seen, to follow on from after the
	// resume.
	Cursor  int64 `json:"c"`
	Expires int64 `json:"e"` // Unix seconds
	// Problem is what was wrong with the last answer, to ask again with.
	Problem string `json:"x,omitempty"`
}

// stateTTL is how long an interrupt's requestState is honoured; after it
// the run is still resumable through mcpflow_resume_run.
const stateTTL = 24 * time.Hour

// errState is every refusal of a requestState: forged, altered, expired
// or someone else's.
var errState = errors.New("requestState refused")

// stateSigner signs and checks requestStates with HMAC-SHA-256.
type stateSigner struct{ key []byte }

// sign encodes st as "<payload>.<mac>", both base64url.
func (s stateSigner) sign(st requestState) string {
	raw, _ := json.Marshal(st) // a struct of strings and numbers
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.mac(payload))
}

// open checks a signed state: its signature, its expiry at now and that it
// is principal's.
func (s stateSigner) open(signed, principal string, now time.Time) (requestState, error) {
	payload, mac, ok := strings.Cut(signed, ".")
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if !ok || err != nil || !hmac.Equal(got, s.mac(payload)) {
		return requestState{}, fmt.Errorf("%w: its signature does not match", errState)
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	var st requestState
	if err != nil || json.Unmarshal(raw, &st) != nil {
		return requestState{}, fmt.Errorf("%w: it does not decode", errState)
	}
	switch {
	case st.Principal != principal:
		return requestState{}, fmt.Errorf("%w: it was issued to another caller", errState)
	case now.Unix() > st.Expires:
		return requestState{}, fmt.Errorf("%w: it expired; the run %s is still resumable with mcpflow_resume_run", errState, st.RunID)
	}
	return st, nil
}

func (s stateSigner) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(payload))
	return m.Sum(nil)
}
