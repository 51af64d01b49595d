package placement_test

import (
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/placement"
	"github.com/mcpflow/mcpflow/actors/config"
)

func members(ids ...string) map[string]string {
	m := map[string]string{}
	for _, id := range ids {
		m[id] = id + ":7946"
	}
	return m
}

func TestConnectionsSpreadOverTheNodesAndOnlyALeavingNodesMove(t *testing.T) {
	is := is.New(t)
	three, two := members("a", "b", "c"), members("a", "c")
	homes := map[string]int{}
	moved := 0
	const n = 3000
	for i := range n {
		conn := config.Connection{ID: fmt.Sprintf("source%d.default", i)}
		home := placement.Home(conn, three)
		homes[home]++
		is.Equal(placement.Home(conn, three), home) // every node agrees, every time
		after := placement.Home(conn, two)
		if home != "b" {
			is.Equal(after, home) // b leaving moves none of the others' connections
		} else {
			moved++
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		is.True(homes[id] > n/3*8/10 && homes[id] < n/3*12/10) // within a fifth of an even share
	}
	is.Equal(moved, homes["b"])
}

func TestAPinnedConnectionsHomeIsOneOfItsNodes(t *testing.T) {
	is := is.New(t)
	conn := config.Connection{ID: "files.default", Nodes: []string{"b", "c"}}
	for i := range 50 {
		conn.ID = fmt.Sprintf("files%d.default", i)
		home := placement.Home(conn, members("a", "b", "c"))
		is.True(home == "b" || home == "c")
	}
	is.Equal(placement.Home(conn, members("a")), "") // none of its nodes is live
}
