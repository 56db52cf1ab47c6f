-- kfa schema 6: the records' change feed is the change log's record
-- events; durable follower cursors; the log's trimming state.

-- A fact of the change a follower needs beside the ids (a qualifying
-- reply), so that it reads nothing per event.
ALTER TABLE change_log ADD COLUMN note text NOT NULL DEFAULT '';

-- get_changes reads the record events in log order, and trimming looks
-- for a record's later entry: both through partial indexes, so a log
-- made mostly of task events costs them nothing.
CREATE INDEX change_log_records ON change_log (tx, seq)
  WHERE kind IN ('record.upserted', 'record.deleted');
CREATE INDEX change_log_record_ids ON change_log (subject, tx, seq)
  WHERE kind IN ('record.upserted', 'record.deleted');

-- The feed carried over, in feed order. The log's own record events
-- (appended beside the feed since schema 4) are the feed's last entries:
-- they go, so that none is there twice. Nothing followed the log before
-- this schema; a get_changes cursor of the old feed is answered as too
-- old, and its reader starts over.
DELETE FROM change_log WHERE kind IN ('record.upserted', 'record.deleted');
INSERT INTO change_log (kind, subject, at_ms, written_ms)
  SELECT CASE op WHEN 'delete' THEN 'record.deleted' ELSE 'record.upserted' END, id, at_ms, written_ms
  FROM feed ORDER BY seq;
-- feed_state's one row was locked by every record write.
DROP TABLE feed;
DROP TABLE feed_state;

-- The durable followers' cursors: trimming waits for those updated
-- within the retention horizon.
CREATE TABLE log_cursors (
  name       text COLLATE "C" PRIMARY KEY,
  tx         bigint NOT NULL,
  seq        bigint NOT NULL,
  updated_ms bigint NOT NULL
);

-- Where trimming stands: the newest event it removed (a reader before it
-- may have missed events), the newest record event it removed (the
-- records feed's), and where its last walk of the log stopped. Written by
-- trims only.
CREATE TABLE log_trim (
  one           boolean PRIMARY KEY DEFAULT true CHECK (one),
  trimmed_tx    bigint NOT NULL DEFAULT 0,
  trimmed_seq   bigint NOT NULL DEFAULT 0,
  records_tx    bigint NOT NULL DEFAULT 0,
  records_seq   bigint NOT NULL DEFAULT 0,
  floor_tx      bigint NOT NULL DEFAULT 0,
  floor_seq     bigint NOT NULL DEFAULT 0
);
INSERT INTO log_trim DEFAULT VALUES;
