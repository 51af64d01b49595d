-- Retention (store.RunRetention).
--
-- runs.expires_at is when a finished run may be pruned (store.RunExpiry):
-- NULL for a run that has not ended, or that is kept for ever. Runs that
-- ended before this version get the store's retention from their end, when
-- it is migrated (backfillExpiry).
ALTER TABLE runs ADD COLUMN expires_at timestamptz;
CREATE INDEX runs_by_expiry ON runs (expires_at, id) WHERE expires_at IS NOT NULL;

-- The runs retention pruned, kept for a time so that looking one up says
-- "pruned" rather than "not found".
CREATE TABLE run_tombstones (
	run_id    text COLLATE "C" PRIMARY KEY,
	pruned_at timestamptz NOT NULL
);
CREATE INDEX run_tombstones_by_time ON run_tombstones (pruned_at);

-- Pruning deletes in small batches all day long: autovacuum should follow
-- once 5% of a table is dead rows (20% by default), so that the space of
-- pruned runs is reused soon and the tables stay near their steady size.
ALTER TABLE runs SET (autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE run_trace SET (autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE run_events SET (autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE run_tombstones SET (autovacuum_vacuum_scale_factor = 0.05);
