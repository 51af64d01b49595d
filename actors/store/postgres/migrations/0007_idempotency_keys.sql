-- The idempotency keys of run starts (store.IdempotencyKeys): each
-- claimed by the run created with it, in the same transaction, until
-- expires_at. No reference to runs: a key outlives the pruning of its
-- run, until retention drops it once expired.
CREATE TABLE idempotency_keys (
	key           text COLLATE "C" PRIMARY KEY,
	run_id        text COLLATE "C" NOT NULL,
	deployment_id text COLLATE "C" NOT NULL,
	input_hash    text NOT NULL,
	expires_at    timestamptz NOT NULL
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
