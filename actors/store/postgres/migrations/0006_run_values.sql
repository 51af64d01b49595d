-- The large values of each run's records (store.Values): a value of
-- store.ValueMin bytes or more is kept here once per run, and the run's
-- record, trace entries and events that hold it refer to it by key
-- (store.Packed). The rows written before this version are plain JSON,
-- which is read as it is.
CREATE TABLE run_values (
	run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	key    text COLLATE "C" NOT NULL, -- store.ValueKey of value
	value  text NOT NULL,
	PRIMARY KEY (run_id, key)
);
ALTER TABLE run_values SET (autovacuum_vacuum_scale_factor = 0.05);
