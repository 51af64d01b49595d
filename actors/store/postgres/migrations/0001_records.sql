-- Every record kind of store.Store. Each table keeps its records as the
-- JSON text that encoding/json wrote, in record, beside the columns that
-- its keys, filters, orderings and compare-and-sets need. Keys are
-- COLLATE "C": they compare as byte strings, as the store contract says,
-- whatever the database's default collation.

CREATE TABLE workspaces (
	id       text COLLATE "C" PRIMARY KEY,
	revision bigint NOT NULL,
	record   text NOT NULL
);

CREATE TABLE artifacts (
	id           text COLLATE "C" NOT NULL,
	version      bigint NOT NULL,
	kind         text COLLATE "C" NOT NULL,
	-- id, title, description and kind as Go's strings.ToLower folds them,
	-- which queries match against: the same match as the other stores,
	-- whatever the database's locale.
	folded       text[] NOT NULL,
	content_hash text NOT NULL, -- store.ArtifactHash of the record
	record       text NOT NULL,
	PRIMARY KEY (id, version)
);

CREATE TABLE deployments (
	id     text COLLATE "C" PRIMARY KEY,
	record text NOT NULL
);

CREATE TABLE runs (
	id              text COLLATE "C" PRIMARY KEY,
	status          text COLLATE "C" NOT NULL,
	-- The update time, to the microsecond, and the nanoseconds below it:
	-- together they order runs as exactly as the record's time.
	updated_at      timestamptz NOT NULL,
	updated_at_ns   integer NOT NULL CHECK (updated_at_ns BETWEEN 0 AND 999),
	trace_count     integer NOT NULL,
	-- What a commit compares to derive the run's events (store.NewRunEvents)
	-- besides status and trace_count, so that it need not read the record:
	-- the id of the interrupt the run waits in and the ids of the calls in
	-- flight in its checkpoint.
	interrupt_id    text,
	calls_in_flight text[] NOT NULL,
	last_event      bigint NOT NULL, -- the sequence number of its last run event
	record          text NOT NULL
);

CREATE INDEX runs_by_update ON runs (updated_at DESC, updated_at_ns DESC, id DESC);
CREATE INDEX runs_by_status ON runs (status, updated_at DESC, updated_at_ns DESC, id DESC);

CREATE TABLE run_trace (
	run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq    integer NOT NULL, -- position in the trace, from 0
	entry  text NOT NULL,
	PRIMARY KEY (run_id, seq)
);

-- Each run's event log (store.RunEvent), appended in the transaction that
-- commits the change it describes.
CREATE TABLE run_events (
	run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq    bigint NOT NULL, -- per run, from 1, no gaps
	record text NOT NULL,
	PRIMARY KEY (run_id, seq)
);

CREATE TABLE catalogs (
	connection_id text COLLATE "C" PRIMARY KEY,
	record        text NOT NULL
);

-- record holds the secret payload: only the roles mcpflow connects as
-- should be granted this table.
CREATE TABLE auth_records (
	id     text COLLATE "C" PRIMARY KEY,
	record text NOT NULL
);

CREATE TABLE source_registry (
	id     text COLLATE "C" PRIMARY KEY,
	record text NOT NULL
);

-- The admin event log. record is the event with seq 0.
CREATE TABLE events (
	seq    bigint PRIMARY KEY,
	record text NOT NULL
);

-- The sequence number of the last admin event appended. An append
-- increments it in its transaction: appends queue on this one row, so
-- numbers are given in commit order, with no gap (a rolled back append
-- gives its number back), and a reader paging by sequence number never
-- skips an event that commits later with a smaller one. A SEQUENCE would
-- give neither.
CREATE TABLE event_counter (
	only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
	last_seq bigint NOT NULL
);

INSERT INTO event_counter (last_seq) VALUES (0);
