package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// TestAPrunedRunIsNotFoundPrunedAndNotListed runs a deployment that keeps
// its finished runs for a second, prunes them, and asks for the run.
func TestAPrunedRunIsNotFoundPrunedAndNotListed(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-counter", "fake.one.counter")
	saveArtifact(t, f, "ws-counter", "counter", "")
	deploy(t, f, `{"id":"brief","artifact_id":"counter","artifact_version":1,"bindings":{"fake.one":"fake.one"},"retention":{"finished_seconds":1}}`)
	d := mustCall[protocol.Deployment](t, f, protocol.MethodDeploymentsInspect, `{"deployment_id":"brief"}`)
	is.Equal(*d.Retention.FinishedSeconds, int64(1)) // the deployment keeps its retention
	r := startRun(t, f, `{"deployment_id":"brief"}`)
	is.Equal(r.Status, "completed")

	n, err := f.store.PruneRuns(bounded(t), time.Now().Add(time.Minute), store.PruneLimit{Runs: 10, Rows: 100})
	is.NoErr(err)
	is.Equal(n, 1)
	_, err = f.call(t, protocol.MethodRunsInspect, `{"run_id":"`+*r.RunID+`"}`)
	msg := domainError(t, err, "KeyError")
	is.True(strings.Contains(msg, "not found (pruned)")) // inspect says pruned
	_, err = f.call(t, protocol.MethodRunsTrace, `{"run_id":"`+*r.RunID+`","trace_range":{}}`)
	is.True(strings.Contains(domainError(t, err, "KeyError"), "not found (pruned)"))
	list := mustCall[protocol.ListRunsResult](t, f, protocol.MethodRunsList, `{}`)
	is.Equal(list.Total, 0) // and runs.list says nothing of it
	_, err = f.call(t, protocol.MethodRunsInspect, `{"run_id":"run_nope"}`)
	is.True(!strings.Contains(domainError(t, err, "KeyError"), "pruned")) // an unknown run is only unknown
}

func TestADeploymentRetentionIsNotNegative(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-counter", "fake.one.counter")
	saveArtifact(t, f, "ws-counter", "counter", "")
	_, err := f.call(t, protocol.MethodDeploymentsSave,
		`{"deployment":{"id":"d","artifact_id":"counter","artifact_version":1,"bindings":{"fake.one":"fake.one"},"retention":{"finished_seconds":-1}}}`)
	e, ok := err.(*jsonrpc.Error)
	is.True(ok)
	is.Equal(e.Code, jsonrpc.InvalidParams)
	is.True(strings.Contains(e.Message, "finished_seconds is at least 0"))
}
