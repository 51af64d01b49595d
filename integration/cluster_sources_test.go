package integration

// The source registry in a cluster (issue 22 keeps it working as the
// registry moved below the API): what one node applies, every other node
// follows, through the store's announcements.

import (
	"slices"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// connectionIDs are the effective connections c's node lists.
func connectionIDs(t *testing.T, c *client.Client) []string {
	t.Helper()
	conns, err := c.ListConnections(testContext(t))
	is.New(t).NoErr(err)
	ids := []string{}
	for _, conn := range conns.Connections {
		ids = append(ids, conn.ID)
	}
	return ids
}

// TestClusterAPIAppliedSourcesAreFollowedByTheOtherNodes: a registry
// entry added and applied on node a becomes an effective source of node
// b, and once a removes it and applies again, b drops it too.
func TestClusterAPIAppliedSourcesAreFollowedByTheOtherNodes(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	c := servedCluster(t, stdioSource(clusterCounter, fakeMCP), "a", "b")
	membersSettled(t, c)
	onA, onB := c.client(t, "a"), c.client(t, "b")
	const added = "reg.fake"
	is.True(!slices.Contains(connectionIDs(t, onB), added))

	is.NoErr(onA.Call(testContext(t), p.MethodRegistryAdd, p.Object{"entry": p.Object{"id": added,
		"transport": p.Object{"kind": "stdio", "command": fakeMCP}}}, nil))
	var applied p.ApplyRegistryChangesResult
	is.NoErr(onA.Call(testContext(t), p.MethodRegistryApply, p.Object{}, &applied))
	is.Equal(applied.Registered, []string{added}) // a applied it
	poll.For(t, "b follows a's apply", settleWait, func() bool { return slices.Contains(connectionIDs(t, onB), added) })

	is.NoErr(onA.Call(testContext(t), p.MethodRegistryRemove, p.Object{"source_id": added}, nil))
	is.NoErr(onA.Call(testContext(t), p.MethodRegistryApply, p.Object{}, &applied))
	is.Equal(applied.Removed, []string{added})
	poll.For(t, "b follows a's removal", settleWait, func() bool { return !slices.Contains(connectionIDs(t, onB), added) })
}
