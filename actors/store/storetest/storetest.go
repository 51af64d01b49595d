// Package storetest is the conformance suite of store.Store: every
// implementation runs it, so that they all behave as the interface says.
package storetest

import (
	"github.com/matryer/is"

	"testing"

	"github.com/mcpflow/mcpflow/actors/secrets"
	"github.com/mcpflow/mcpflow/actors/store"
)

// Run checks the stores that open returns against the store.Store contract.
// open must return a new, empty store with opts applied on each call; Run
// closes it. The tests run in parallel, each on its own store.
func Run(t *testing.T, open func(t *testing.T, opts ...store.Option) store.Store) {
	sealer, err := secrets.Ephemeral()
	is.New(t).NoErr(err)
	tests := []struct {
		name string
		test func(t *testing.T, s store.Store)
		opts []store.Option
	}{
		{"Workspaces", testWorkspaces, nil},
		{"WorkspaceCompareAndSet", testWorkspaceCompareAndSet, nil},
		{"WorkspaceConcurrentUpdates", testWorkspaceConcurrentUpdates, nil},
		{"Artifacts", testArtifacts, nil},
		{"ListArtifacts", testListArtifacts, nil},
		{"Deployments", testDeployments, nil},
		{"Catalogs", testCatalogs, nil},
		{"Runs", testRuns, nil},
		{"RecordProgress", testRecordProgress, nil},
		{"ReadTrace", testReadTrace, nil},
		{"ListRuns", testListRuns, nil},
		{"ListRunsByLastUpdate", testListRunsByLastUpdate, nil},
		{"RecoverRunning", testRecoverRunning, nil},
		{"Checkpoint", testCheckpoint, nil},
		{"LargeValues", testLargeValues, nil},
		{"RunEvents", testRunEvents, nil},
		{"RunEventsAtomic", testRunEventsAtomic, nil},
		{"LiveRunEvents", testLiveRunEvents, nil},
		{"CreateRunWithTrace", testCreateRunWithTrace, nil},
		{"RunLineage", testRunLineage, nil},
		{"RunAdminEvents", testRunAdminEvents, nil},
		{"IdempotencyKeyConcurrent", testIdempotencyKeyConcurrent, nil},
		{"IdempotencyKeyLifetime", testIdempotencyKeyLifetime, nil},
		{"AuthRecords", testAuthRecords, nil},
		{"AuthIDs", testAuthIDs, nil},
		{"SourceRegistry", testSourceRegistry, nil},
		{"Webhooks", testWebhooks, nil},
		{"SealedWebhooks", testWebhooks, []store.Option{store.WithSealer(sealer)}},
		{"WebhookDeliveries", testWebhookDeliveries, nil},
		{"WebhookDeliveryLog", testWebhookDeliveryLog, nil},
		{"Schedules", testSchedules, nil},
		{"Events", testEvents, nil},
		{"ConcurrentEvents", testConcurrentEvents, nil},
		{"EventPaging", testEventPaging, nil},
		{"EventRetention", testEventRetention, []store.Option{store.WithMaxEvents(retainedEvents)}},
		{"DeepCopy", testDeepCopy, nil},
		{"DeepCopyRecords", testDeepCopyRecords, nil},
		{"PruneRuns", testPruneRuns, []store.Option{store.WithRetention(retention)}},
		{"TransientRuns", testTransientRuns, nil},
		{"PruneLimits", testPruneLimits, []store.Option{store.WithRetention(retention)}},
		{"PruneEveryExpiredRun", testPruneEveryExpiredRun, []store.Option{store.WithRetention(retention)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := open(t, tt.opts...)
			t.Cleanup(func() { is.NewRelaxed(t).NoErr(s.Close()) })
			tt.test(t, s)
		})
	}
}
