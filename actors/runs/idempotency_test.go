package runs_test

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// TestAStartWithAnIdempotencyKeyStartsOneRun: starts with one key, at
// once and after, answer with one run, the later ones deduplicated; the
// key with another input or another deployment is refused naming that
// run; once the window has passed, the key starts a new run.
func TestAStartWithAnIdempotencyKeyStartsOneRun(t *testing.T) {
	is := is.New(t)
	var later atomic.Int64 // how far the manager's clock is ahead
	n := newNodeTuned(t, func(c *runs.Config) {
		c.IdempotencyWindow = time.Hour
		c.Now = func() time.Time { return time.Now().Add(time.Duration(later.Load())) }
	})
	ctx := bounded(t)
	start := func(dep, key string, input workflow.Object) (runs.StartResult, error) {
		return n.manager.Start(ctx, runs.StartRequest{DeploymentID: dep, Input: input, IdempotencyKey: key, Wait: patience})
	}

	const starts = 20
	results, errs := make([]runs.StartResult, starts), make([]error, starts)
	var wg sync.WaitGroup
	for i := range starts {
		wg.Go(func() { results[i], errs[i] = start("count", "order-1", nil) })
	}
	wg.Wait()
	first, deduplicated := results[0].Run.ID, 0
	for i, res := range results {
		is.NoErr(errs[i])           // every start is answered with a run
		is.Equal(res.Run.ID, first) // all with the same run
		if res.Deduplicated {
			deduplicated++
		}
	}
	is.Equal(deduplicated, starts-1) // only one started it
	_, total, err := n.store.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	is.Equal(total, 1) // one run in the store

	again, err := start("count", "order-1", workflow.Object{})
	is.NoErr(err)
	is.True(again.Deduplicated) // {} is the input nil stands for
	is.Equal(again.Run.ID, first)
	is.Equal(again.Run.Status, store.RunCompleted) // as committed

	_, err = start("count", "order-1", workflow.Object{"n": 2})
	var refused *runs.Error
	is.True(errors.As(err, &refused)) // another input is refused
	is.Equal(refused.Kind, runs.InvalidParams)
	is.True(strings.Contains(refused.Message, first)) // naming the first run
	is.True(strings.Contains(refused.Message, "another workflow input"))

	is.NoErr(n.store.SaveDeployment(ctx, store.Deployment{ID: "count2", ArtifactID: "count", ArtifactVersion: 1, DriftPolicy: "block",
		Bindings: []store.Binding{{LogicalSource: "fake.one", ConcreteSource: "fake.one"}}}))
	_, err = start("count2", "order-1", nil)
	is.True(errors.As(err, &refused)) // another deployment is refused
	is.Equal(refused.Kind, runs.InvalidParams)
	is.True(strings.Contains(refused.Message, `of deployment "count", not of "count2"`))

	later.Store(int64(time.Hour + time.Second)) // the window has passed
	fresh, err := start("count", "order-1", nil)
	is.NoErr(err)
	is.True(!fresh.Deduplicated) // a new run
	is.True(fresh.Run.ID != first)
	k, err := n.store.GetIdempotencyKey(ctx, "order-1")
	is.NoErr(err)
	is.Equal(k.RunID, fresh.Run.ID) // which holds the key now
}
