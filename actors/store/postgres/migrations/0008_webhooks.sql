-- Signed webhooks (store.Webhooks): each definition's record holds its
-- secrets, sealed when the store seals (grant this table as
-- auth_records, see docs/postgres.md), and each delivery id a webhook
-- has taken, until expires_at, so that a replayed delivery starts
-- nothing; retention prunes the expired ones.
CREATE TABLE webhooks (
	id     text COLLATE "C" PRIMARY KEY,
	record text NOT NULL
);

CREATE TABLE webhook_deliveries (
	hook_id     text COLLATE "C" NOT NULL,
	delivery_id text COLLATE "C" NOT NULL,
	expires_at  timestamptz NOT NULL,
	PRIMARY KEY (hook_id, delivery_id)
);
CREATE INDEX webhook_deliveries_by_expiry ON webhook_deliveries (expires_at);
