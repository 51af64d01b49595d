-- The run journal (issue 32): a step of a run that stays running on its
-- node is one row here, where it was an update of the run's row and an
-- insert into run_trace and one into run_events. A row holds the run's
-- head and record after the step (its checkpoint), the step's trace
-- entries and its run events. The commit that next changes the run's
-- status (its end, an interrupt, a recovery) folds the journal: it moves
-- the entries and events into run_trace and run_events, deletes the rows
-- and writes the run's row; so does the step that would pass a bound of
-- rows per run (maxJournalRows). Reads fold the row with the journal. A
-- store of an older version holds no journal: nothing to convert.
CREATE TABLE run_journal (
	run_id          text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq             integer NOT NULL, -- per run, from 1, while the journal holds rows
	-- The run's head after the step, as the columns of runs keep it.
	trace_count     integer NOT NULL,
	interrupt_id    text,
	calls_in_flight text[] NOT NULL,
	last_event      bigint NOT NULL,
	record          text NOT NULL,     -- the run after the step, as runs.record
	trace           text[] NOT NULL,   -- its entries, the last of the trace, as run_trace.entry
	event_seqs      bigint[] NOT NULL, -- its run events' sequence numbers
	events          text[] NOT NULL,   -- and their records, as run_events.record
	PRIMARY KEY (run_id, seq)
);
ALTER TABLE run_journal SET (autovacuum_vacuum_scale_factor = 0.05);
