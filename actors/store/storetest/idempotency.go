package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

// concurrentStarts is how many creates with one idempotency key
// testIdempotencyKeyConcurrent makes at once.
const concurrentStarts = 50

// keyed is run id, created at t0 with idempotency key key, held for
// window.
func keyed(id, key string, window time.Duration) store.Run {
	r := run(id, store.RunRunning, t0)
	hash, _ := store.InputHash(r.Input)
	r.Idempotency = &store.RunIdempotency{Key: key, InputHash: hash, ExpiresAt: t0.Add(window)}
	return r
}

// testIdempotencyKeyConcurrent creates 50 runs with one idempotency key
// at once: exactly one is created, the others are refused with
// ErrKeyTaken, and the key names the one created.
func testIdempotencyKeyConcurrent(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := context.Background()
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		errs    = make([]error, concurrentStarts)
		created []string
		mu      sync.Mutex
	)
	for i := range concurrentStarts {
		wg.Go(func() {
			id := fmt.Sprintf("run-%02d", i)
			<-start
			errs[i] = s.CreateRun(ctx, keyed(id, "order-42", time.Hour), nil)
			if errs[i] == nil {
				mu.Lock()
				created = append(created, id)
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	is.Equal(len(created), 1) // exactly one run created
	for _, err := range errs {
		is.True(err == nil || errors.Is(err, store.ErrKeyTaken)) // the others refused as a taken key
	}
	_, total, err := s.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	is.Equal(total, 1) // nothing of the refused runs was written
	k, err := s.GetIdempotencyKey(ctx, "order-42")
	is.NoErr(err)
	is.Equal(k.RunID, created[0])
	is.Equal(k.DeploymentID, "dep")
	is.True(k.ExpiresAt.Equal(t0.Add(time.Hour)))
	got, err := s.GetRun(ctx, created[0])
	is.NoErr(err)
	is.Equal(got.Idempotency.Key, "order-42") // the run keeps its key
}

// testIdempotencyKeyLifetime: a key is held until it expires, a create
// refused for another reason claims nothing, an expired claim is taken
// over by the next run, and DropIdempotencyKeys drops the expired ones
// only.
func testIdempotencyKeyLifetime(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := context.Background()
	_, err := s.GetIdempotencyKey(ctx, "k")
	is.True(errors.Is(err, store.ErrNotFound))

	is.NoErr(s.CreateRun(ctx, run("plain", store.RunRunning, t0), nil))
	err = s.CreateRun(ctx, keyed("plain", "k", time.Minute), nil) // the id is taken
	is.True(errors.Is(err, store.ErrExists))
	_, err = s.GetIdempotencyKey(ctx, "k")
	is.True(errors.Is(err, store.ErrNotFound)) // claimed with nothing created: not claimed

	is.NoErr(s.CreateRun(ctx, keyed("first", "k", time.Minute), nil))
	is.NoErr(s.CreateRun(ctx, keyed("other-key", "k2", 3*time.Minute), nil))
	err = s.CreateRun(ctx, keyed("second", "k", time.Minute), nil)
	is.True(errors.Is(err, store.ErrKeyTaken))

	later := keyed("third", "k", time.Minute) // created as the first's claim ends
	later.CreatedAt, later.UpdatedAt = t0.Add(time.Minute), t0.Add(time.Minute)
	later.Idempotency.ExpiresAt = later.CreatedAt.Add(time.Minute)
	is.NoErr(s.CreateRun(ctx, later, nil))
	k, err := s.GetIdempotencyKey(ctx, "k")
	is.NoErr(err)
	is.Equal(k.RunID, "third") // the expired claim was taken over

	n, err := s.DropIdempotencyKeys(ctx, t0.Add(time.Minute), 10)
	is.NoErr(err)
	is.Equal(n, 0) // neither has expired yet
	n, err = s.DropIdempotencyKeys(ctx, t0.Add(2*time.Minute), 10)
	is.NoErr(err)
	is.Equal(n, 1) // k's, expired at 2 minutes; k2's holds until 3
	_, err = s.GetIdempotencyKey(ctx, "k")
	is.True(errors.Is(err, store.ErrNotFound))
	_, err = s.GetIdempotencyKey(ctx, "k2")
	is.NoErr(err)
}
