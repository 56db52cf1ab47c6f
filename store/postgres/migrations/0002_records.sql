-- kfa schema 2: knowledge records and their change feed.

CREATE TABLE kfa_meta (
  key   text PRIMARY KEY,
  value text NOT NULL
);
-- the feed's epoch: it differs between databases, so that a follower
-- notices when the database under it was replaced
INSERT INTO kfa_meta (key, value) VALUES ('feed_epoch', substr(md5(random()::text || clock_timestamp()::text), 1, 16));

CREATE TABLE records (
  id  text COLLATE "C" PRIMARY KEY,
  doc bytea NOT NULL
);

-- feed_state's one row is the feed's sequence: a writer takes the next
-- number under its row lock, held to commit, so entries commit in
-- sequence order and a follower reading "after N" never skips one that
-- commits late.
CREATE TABLE feed_state (
  one     boolean PRIMARY KEY DEFAULT true CHECK (one),
  last    bigint NOT NULL,
  trimmed bigint NOT NULL
);
INSERT INTO feed_state (last, trimmed) VALUES (0, 0);

CREATE TABLE feed (
  seq        bigint PRIMARY KEY,
  id         text COLLATE "C" NOT NULL,
  op         text NOT NULL,
  at_ms      bigint NOT NULL,
  written_ms bigint NOT NULL
);
CREATE INDEX feed_id ON feed (id, seq);
