package catalog

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/matryer/is"
)

// nodes lists the nodes of a version and checks the treap's invariants:
// ids in order, each node's priority at least its children's.
func nodes(t *testing.T, n *node, out map[*node]bool) int {
	is := is.New(t)
	is.Helper()
	if n == nil {
		return 0
	}
	out[n] = true
	for _, kid := range []*node{n.left, n.right} {
		if kid != nil {
			is.True(kid.prio <= n.prio) // heap order
		}
	}
	if n.left != nil {
		is.True(n.left.e.snap.ConnectionID < n.e.snap.ConnectionID) // search order
	}
	if n.right != nil {
		is.True(n.right.e.snap.ConnectionID > n.e.snap.ConnectionID) // search order
	}
	return 1 + max(nodes(t, n.left, out), nodes(t, n.right, out))
}

// A Put copies the path to the connection it replaces and shares every
// other node with the version before: it does not copy the others.
func TestPutCopiesOnlyThePathToTheConnection(t *testing.T) {
	is := is.New(t)
	const n = 10_000
	snaps := make([]Snapshot, 0, n)
	for i := range n {
		snaps = append(snaps, Snapshot{ConnectionID: fmt.Sprintf("src%05d.default", i)})
	}
	r := NewRegistry(snaps)
	before := map[*node]bool{}
	depth := nodes(t, r.root.Load(), before)
	is.Equal(len(before), n)
	is.True(depth <= 4*bits.Len(n)) // balanced: O(log n) deep

	r.Put(Snapshot{ConnectionID: "src04242.default", FetchedAtEpochMs: 1})
	after := map[*node]bool{}
	nodes(t, r.root.Load(), after)
	is.Equal(len(after), n) // replaced, not added
	fresh := 0
	for nd := range after {
		if !before[nd] {
			fresh++
		}
	}
	is.True(fresh <= depth+1) // only the path is new
	got, _ := r.Get("src04242.default")
	is.Equal(got.FetchedAtEpochMs, int64(1))
}
