package mcpface

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// requestState is what a 2026-era client carries from an input_required
// answer to its retry: which run waits at which interrupt, for whom, until
// when. It is sealed (AES-256-GCM under the store's secrets key), so a
// client can neither read, forge nor alter it, and any node of a cluster,
// or the server after a restart, opens it.
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

// Sealer seals and opens values under keys (actors/secrets.Keyring).
type Sealer interface {
	Seal(aad, plaintext []byte) (string, error)
	Open(aad []byte, value string) ([]byte, error)
}

// stateAAD binds a sealed value to its use: a sealed auth record is no
// request state.
var stateAAD = []byte("mcpflow mcp request state v1")

// stateSigner seals and opens requestStates.
type stateSigner struct{ sealer Sealer }

// sign seals st.
func (s stateSigner) sign(st requestState) (string, error) {
	raw, _ := json.Marshal(st) // a struct of strings and numbers
	sealed, err := s.sealer.Seal(stateAAD, raw)
	if err != nil {
		return "", fmt.Errorf("seal the request state: %w", err)
	}
	return sealed, nil
}

// open checks a sealed state: that it opens, is principal's and has not
// expired at now.
func (s stateSigner) open(sealed, principal string, now time.Time) (requestState, error) {
	raw, err := s.sealer.Open(stateAAD, sealed)
	if err != nil {
		return requestState{}, fmt.Errorf("%w: it does not open under this server's keys", errState)
	}
	var st requestState
	if err := json.Unmarshal(raw, &st); err != nil {
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
