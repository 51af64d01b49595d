package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// sleepDeployment saves artifact "nap" over fake.one.sleep and deployment
// "nap" bound to fake.one.
func sleepDeployment(t *testing.T, f *fixture) {
	t.Helper()
	mustCall[protocol.RefreshCatalogResult](t, f, protocol.MethodConnectionsRefreshCatalog, `{"connection_id":"fake.one"}`)
	scaffold(t, f, "ws-nap", "fake.one.sleep")
	saveArtifact(t, f, "ws-nap", "nap", "")
	deploy(t, f, `{"id":"nap","artifact_id":"nap","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)
}

type started struct {
	res any
	err error
}

// startAsync calls runs.start off the test goroutine.
func startAsync(f *fixture, params string) <-chan started {
	out := make(chan started, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		res, err := f.methods[protocol.MethodRunsStart].Handler(ctx, json.RawMessage(params))
		out <- started{res, err}
	}()
	return out
}

// runningIDs polls the store until n runs are running.
func runningIDs(t *testing.T, f *fixture, n int) []string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	return poll.Value(t, fmt.Sprintf("%d runs running", n), patience, func() ([]string, bool) {
		runs, _, err := f.store.ListRuns(bounded(t), store.RunQuery{Status: store.RunRunning})
		is.NoErr(err)
		ids := make([]string, 0, len(runs))
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		return ids, len(runs) >= n
	})
}

// TestStopRunsAnswersWaitersDrainsThenHalts: once the service stops, a
// runs.start waiting for its run answers at once with the run as it
// stands; a run whose step ends within the drain completes; one whose
// step outlasts it is halted, still running in the store with its call
// listed; and no run starts any more.
func TestStopRunsAnswersWaitersDrainsThenHalts(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	f.svc.RunWait = time.Minute
	sleepDeployment(t, f)
	long := startAsync(f, `{"deployment_id":"nap","workflow_input":{"ms":60000}}`)
	runningIDs(t, f, 1)
	short := startAsync(f, `{"deployment_id":"nap","workflow_input":{"ms":300}}`)
	runningIDs(t, f, 2)

	stopped := make(chan runsStopped, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		r, err := f.svc.Runs.Drain(ctx, time.Now().Add(time.Second))
		stopped <- runsStopped{r.Finished, r.Halted, err}
	}()
	ids := map[string]string{}
	for name, ch := range map[string]<-chan started{"long": long, "short": short} {
		s := <-ch
		is.NoErr(s.err) // a waiting runs.start is answered
		res := s.res.(protocol.RunResult)
		is.Equal(res.Status, "running") // with the run as it stands
		ids[name] = *res.RunID
	}
	_, err := f.call(t, protocol.MethodRunsStart, `{"deployment_id":"nap","workflow_input":{"ms":1}}`)
	var rpcErr *jsonrpc.Error
	is.True(errors.As(err, &rpcErr))
	is.Equal(rpcErr.Code, jsonrpc.Overloaded) // no new run once stopping

	s := <-stopped
	is.NoErr(s.err)
	is.Equal(s.finished, 1) // the short step finished during the drain
	is.Equal(s.halted, 1)   // the long one was halted
	done, err := f.store.GetRun(bounded(t), ids["short"])
	is.NoErr(err)
	is.Equal(done.Status, store.RunCompleted)
	cut, err := f.store.GetRun(bounded(t), ids["long"])
	is.NoErr(err)
	is.Equal(cut.Status, store.RunRunning) // left for the next start to recover
	is.Equal(len(cut.Checkpoint.Calls), 1)
}

type runsStopped struct {
	finished, halted int
	err              error
}
