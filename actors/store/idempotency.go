package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// ErrKeyTaken means a run was not created because its idempotency key is
// held, within its window, by another run (IdempotencyKeys). Nothing of
// the run was written.
var ErrKeyTaken = errors.New("the idempotency key is held by another run")

// RunIdempotency is the idempotency key a run is started with
// (Run.Idempotency): CreateRun claims Key for the run, in the
// transaction that creates it, until ExpiresAt.
type RunIdempotency struct {
	Key string `json:"key"`
	// InputHash is InputHash of the run's input.
	InputHash string    `json:"input_hash"`
	ExpiresAt time.Time `json:"expires_at"`
}

// IdempotencyKey is a key as claimed: the run it holds, that run's
// deployment and the hash of its input, and when the claim ends.
type IdempotencyKey struct {
	Key          string
	RunID        string
	DeploymentID string
	InputHash    string
	ExpiresAt    time.Time
}

// IdempotencyKeys are the keys runs were started with. A key is claimed
// by CreateRun of a run whose Idempotency is set: the run is created only
// if the key is free, or its claim expired at or before the run's
// CreatedAt (the new run then takes it over); otherwise CreateRun fails
// with ErrKeyTaken and writes nothing. Of several creates with one key at
// once, on one node or on several, exactly one succeeds.
type IdempotencyKeys interface {
	// GetIdempotencyKey returns the claim of key as stored (an expired
	// claim retention has not dropped yet included), or ErrNotFound.
	GetIdempotencyKey(ctx context.Context, key string) (IdempotencyKey, error)
}

// IdempotencyKeyOf is the claim that creating r makes, or nil for a run
// started without a key.
func IdempotencyKeyOf(r Run) *IdempotencyKey {
	if r.Idempotency == nil {
		return nil
	}
	return &IdempotencyKey{Key: r.Idempotency.Key, RunID: r.ID, DeploymentID: r.DeploymentID,
		InputHash: r.Idempotency.InputHash, ExpiresAt: r.Idempotency.ExpiresAt.UTC()}
}

// KeyTaken is the error of a create refused because key is held.
func KeyTaken(key string) error {
	return fmt.Errorf("idempotency key %q: %w", key, ErrKeyTaken)
}

// InputHash is the hex SHA-256 of input's canonical JSON (object keys
// sorted, no space): two inputs hash alike exactly when they are the same
// JSON value. A nil input hashes as {}.
func InputHash(input workflow.Object) (string, error) {
	if input == nil {
		input = workflow.Object{}
	}
	b, err := json.Marshal(input)
	if err != nil {
		return "", fmt.Errorf("hash the workflow input: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
