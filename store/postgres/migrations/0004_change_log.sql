-- kfa schema 4: the change log (package changelog). Every transaction
-- that changes something appends its events here, in the same
-- transaction. tx is the appending transaction's id: a reader reads only
-- the events of transactions older than every transaction still running
-- (pg_snapshot_xmin), in (tx, seq) order, so an event can never commit
-- behind a reader's cursor, and no row is locked or updated by every
-- write (the sequence is not a row).
CREATE TABLE change_log (
  tx         bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
  seq        bigserial NOT NULL,
  kind       text NOT NULL,
  subject    text COLLATE "C" NOT NULL,
  owner      text COLLATE "C" NOT NULL DEFAULT '',
  ref        text NOT NULL DEFAULT '',
  at_ms      bigint NOT NULL,
  written_ms bigint NOT NULL,
  PRIMARY KEY (tx, seq)
);
