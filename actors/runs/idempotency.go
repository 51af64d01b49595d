package runs

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// idempotent is a start's idempotency key and the hash of its input.
type idempotent struct {
	key, deployment, hash string
}

// newIdempotent is req's key with the hash of its input.
func newIdempotent(req StartRequest, input workflow.Object) (*idempotent, error) {
	hash, err := store.InputHash(input)
	if err != nil {
		return nil, invalidParams("invalid params: %v", err)
	}
	return &idempotent{key: req.IdempotencyKey, deployment: req.DeploymentID, hash: hash}, nil
}

// claim is what the record of a new run started with id claims: its key
// until the manager's window has passed since rec was created.
func (m *Manager) claim(id *idempotent, rec store.Run) *store.RunIdempotency {
	window := cmp.Or(m.cfg.IdempotencyWindow, config.DefaultIdempotencyWindow)
	return &store.RunIdempotency{Key: id.key, InputHash: id.hash, ExpiresAt: rec.CreatedAt.Add(window).UTC()}
}

// firstRun is the run that holds id's key, as committed, when the key is
// held within its window (found); a key held for another deployment or
// another input is refused (InvalidParams), naming the run that holds it.
func (m *Manager) firstRun(ctx context.Context, id *idempotent) (r store.Run, found bool, err error) {
	k, err := m.cfg.Store.GetIdempotencyKey(ctx, id.key)
	if errors.Is(err, store.ErrNotFound) || err == nil && !k.ExpiresAt.After(m.now()) {
		return store.Run{}, false, nil
	}
	if err != nil {
		return store.Run{}, false, storeErr(err, fmt.Sprintf("idempotency key %q", id.key))
	}
	switch {
	case k.DeploymentID != id.deployment:
		return store.Run{}, false, invalidParams("invalid params: idempotency key %q started run %s of deployment %q, not of %q; "+
			"a key starts one run of one deployment until %s: use another key", id.key, k.RunID, k.DeploymentID, id.deployment, stamp(k))
	case k.InputHash != id.hash:
		return store.Run{}, false, invalidParams("invalid params: idempotency key %q started run %s with another workflow input; "+
			"a retry must send the same input, or another key (the key is held until %s)", id.key, k.RunID, stamp(k))
	}
	r, err = m.cfg.Store.GetRun(ctx, k.RunID)
	if err != nil {
		return store.Run{}, false, storeErr(err, fmt.Sprintf("workflow run %q, started with idempotency key %q", k.RunID, id.key))
	}
	return r, true, nil
}

// stamp is when k's claim ends, as an error message says it.
func stamp(k store.IdempotencyKey) string { return k.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z") }

// lostClaim answers a start whose run's creation the store refused
// because id's key was claimed meanwhile (store.ErrKeyTaken), on this
// node or another: with the run that claimed it, deduplicated.
func (m *Manager) lostClaim(ctx context.Context, id *idempotent) (StartResult, error) {
	r, found, err := m.firstRun(ctx, id)
	if err == nil && !found {
		// Its claim ended between the refusal and the look.
		err = failure(Upstream, "idempotency key %q: the run that held it let it go as this start claimed it; retry", id.key)
	}
	return StartResult{Run: r, Deduplicated: found}, err
}
