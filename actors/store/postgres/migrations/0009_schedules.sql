-- Schedules (store.Schedules): each one's definition (record) and what
-- the scheduling loop records of it (state), written apart so that an
-- update and a fire never overwrite each other.
CREATE TABLE schedules (
	id     text COLLATE "C" PRIMARY KEY,
	record text NOT NULL,
	state  text NOT NULL
);
