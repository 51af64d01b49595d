-- The ownership leases of a cluster (actors/cluster/lease): the node that
-- owns key (a connection id, say) until expires_at. Every time is the
-- database's own, never a node's. epoch counts the key's tenures: it grows
-- by one each time the key changes hands or is taken again after its lease
-- ended, and never goes back, so a row is never deleted (a release ends
-- the lease by setting expires_at).

CREATE TABLE leases (
	key        text COLLATE "C" PRIMARY KEY,
	owner      text NOT NULL,
	epoch      bigint NOT NULL CHECK (epoch > 0),
	expires_at timestamptz NOT NULL,
	renewed_at timestamptz NOT NULL
);
