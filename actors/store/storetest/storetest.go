// Package storetest is the conformance suite of store.Store: every
// implementation runs it, so that they all behave as the interface says.
package storetest

import (
	"testing"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Run checks the stores that open returns against the store.Store contract.
// open must return a new, empty store on each call; Run closes it. The
// tests run in parallel, each on its own store.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		test func(t *testing.T, s store.Store)
	}{
		{"Workspaces", testWorkspaces},
		{"WorkspaceCompareAndSet", testWorkspaceCompareAndSet},
		{"WorkspaceConcurrentUpdates", testWorkspaceConcurrentUpdates},
		{"Artifacts", testArtifacts},
		{"ListArtifacts", testListArtifacts},
		{"Deployments", testDeployments},
		{"Catalogs", testCatalogs},
		{"Runs", testRuns},
		{"RecordProgress", testRecordProgress},
		{"ReadTrace", testReadTrace},
		{"ListRuns", testListRuns},
		{"RecoverRunning", testRecoverRunning},
		{"DeepCopy", testDeepCopy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			tt.test(t, s)
		})
	}
}
