// Package membership says which nodes are members of the cluster, and
// tells hollywood's cluster. A member is a node whose node lease (NodeKey,
// in the leases table of actors/cluster/lease) is live: the node holds it
// with its lease keeper while it runs, so a node that dies, or is cut off
// from the database, stops being a member within the lease's ttl.
//
// The Registry keeps the cluster_members table, where each node writes
// how to reach it as it starts, and reads the members with their node
// leases. A Source gives the live members: the registered ones
// (Registered), or configured ones (Static). NewProvider makes the
// membership provider of hollywood's cluster, which reads a Source every
// interval and hands the member set to the cluster's agent.
package membership
