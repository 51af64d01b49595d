-- Admin events are numbered after the commits that append them.
--
-- A run's commit that appends admin events (its start and its end) no
-- longer takes the next numbers from event_counter in its own transaction,
-- which held the counter's row until that commit was durable and so let
-- one such commit through per WAL flush. It queues its events here,
-- unnumbered, in its own transaction, and once it has committed, a short
-- transaction (the numbering) moves every queued event into events under
-- the next numbers, in the order of their ids, and moves event_counter on.
--
-- Numberings take a transaction-level advisory lock first, so they run one
-- at a time, each after the last one's commit is visible: numbers are
-- still given in commit order and with no gap, and a reader paging by
-- sequence number never sees number n+1 before n. One numbering numbers
-- every event queued by then, so concurrent commits share its flush.
-- An event whose numbering did not happen (its node died right after the
-- commit) is numbered by the next one, by any node.
CREATE TABLE event_queue (
	id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	record text NOT NULL -- the event with seq 0, as events.record
);
