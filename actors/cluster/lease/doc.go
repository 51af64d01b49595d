// Package lease owns the leases that give one node at a time the ownership
// of a key, such as a connection id. A lease is a row of the leases table
// in PostgreSQL (created by the postgres store's migrations): its owner, its
// epoch and its expiry. It knows nothing of actors or MCP.
//
// Every time a lease is compared with is the database's (clock_timestamp()),
// never a node's, so nodes whose clocks disagree cannot both own a key.
// The epoch counts a key's tenures: whoever takes a key that another held,
// or takes it again after its lease ended, gets a greater epoch than any
// before, and Check refuses an epoch that a newer tenure has superseded,
// which fences off a stale owner's messages.
//
// Table acquires, renews, releases, reads and checks leases, each in one
// statement (an Acquire refused reads who holds the key). A Keeper holds a
// node's leases, renews them all in one statement every third of their
// ttl, and reports each lease it loses. docs/cluster.md has the design.
package lease
