-- Live events across nodes (docs/cluster.md). Every statement that
-- appends run events or admin events notifies the channel mcpflow_events,
-- once per run (or once for the admin log), so that each node's live event
-- hub wakes the feeds that follow those logs, whichever node committed.
-- PostgreSQL delivers a notification when its transaction commits, and
-- not at all when it rolls back. The payloads (Listener reads them):
--
--   run <seq> <run id>   the events of a run up to sequence number seq
--   admin <seq>          the admin events up to sequence number seq
--   resync               something changed that a payload cannot name:
--                        every log followed is read again
--
-- The run id comes last so that it may hold any character. A payload is
-- limited to 8000 bytes, which an id longer than 7000 would exceed: such a
-- run sends resync rather than fail its commit.

CREATE FUNCTION notify_run_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('mcpflow_events', CASE
		WHEN octet_length(run_id) <= 7000 THEN 'run ' || max(seq) || ' ' || run_id
		ELSE 'resync' END)
	FROM appended GROUP BY run_id;
	RETURN NULL;
END
$$;

CREATE TRIGGER run_events_notify AFTER INSERT ON run_events
	REFERENCING NEW TABLE AS appended
	FOR EACH STATEMENT EXECUTE FUNCTION notify_run_events();

CREATE FUNCTION notify_admin_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('mcpflow_events', 'admin ' || max(seq)) FROM appended HAVING count(*) > 0;
	RETURN NULL;
END
$$;

CREATE TRIGGER events_notify AFTER INSERT ON events
	REFERENCING NEW TABLE AS appended
	FOR EACH STATEMENT EXECUTE FUNCTION notify_admin_events();
