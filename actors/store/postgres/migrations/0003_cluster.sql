-- The cluster (docs/cluster.md).
--
-- runs.node is the node that executes a running run: the node that
-- created or last resumed it, or the survivor that claimed it after its
-- node died. A node's run commits compare it with the node's own id, so
-- that a node which lost its runs to a survivor (it was paused, or cut
-- off) cannot overwrite what the survivor recovered. "" is a run of a
-- store used by one node alone.
ALTER TABLE runs ADD COLUMN node text COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX runs_running_by_node ON runs (node) WHERE status = 'running';

-- leases.generation is the last session generation opened under the key
-- (a connection's), across every tenure: a new owner's first session is
-- the next one, so that generations grow cluster-wide.
ALTER TABLE leases ADD COLUMN generation bigint NOT NULL DEFAULT 0;

-- The members of the cluster and where to reach them. A member is live
-- while its node lease ('node/' || node_id in leases) is.
CREATE TABLE cluster_members (
	node_id         text COLLATE "C" PRIMARY KEY,
	cluster_address text NOT NULL, -- host:port of its actor remote
	http_address    text NOT NULL, -- host:port of its edge, "" when unknown
	started_at      timestamptz NOT NULL,
	updated_at      timestamptz NOT NULL
);
