-- Each webhook's log of recent deliveries (store.WebhookDelivery, in
-- record): what each was answered, never its body, a header's value or a
-- secret. seq orders a webhook's entries; each insert deletes that
-- webhook's entries past the newest store.RecentDeliveries.
CREATE TABLE webhook_delivery_log (
	seq     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	hook_id text COLLATE "C" NOT NULL,
	record  text NOT NULL
);
CREATE INDEX webhook_delivery_log_by_hook ON webhook_delivery_log (hook_id, seq);
