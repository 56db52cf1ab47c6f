-- kfa schema 8: moderation. Hidden discussions and replies are kept,
-- and left out of what readers see; who wrote what is a column, so that
-- everything an agent wrote can be hidden at once; a reply is found by
-- its id alone (a moderator names it so).
ALTER TABLE discussions ADD COLUMN hidden boolean NOT NULL DEFAULT false;
ALTER TABLE discussions ADD COLUMN author_id text COLLATE "C";
UPDATE discussions SET author_id = convert_from(doc, 'UTF8')::jsonb->>'authorId';
ALTER TABLE discussions ALTER COLUMN author_id SET NOT NULL;
CREATE INDEX discussions_author ON discussions (author_id, id);

ALTER TABLE replies ADD COLUMN hidden boolean NOT NULL DEFAULT false;
ALTER TABLE replies ADD COLUMN author_id text COLLATE "C";
UPDATE replies SET author_id = convert_from(doc, 'UTF8')::jsonb->>'authorId';
ALTER TABLE replies ALTER COLUMN author_id SET NOT NULL;
CREATE INDEX replies_author ON replies (author_id, id);
CREATE UNIQUE INDEX replies_id ON replies (id);

-- The moderation state of every item ever flagged or hidden; the queue
-- is the items waiting for review, most flagged first, then the longest
-- waiting.
CREATE TABLE moderation_items (
  id         text COLLATE "C" PRIMARY KEY,
  queued     boolean NOT NULL,
  flags      integer NOT NULL,
  waiting_ms bigint NOT NULL,
  doc        bytea NOT NULL
);
CREATE INDEX moderation_queue ON moderation_items (flags DESC, waiting_ms, id) WHERE queued;

-- One flag per agent per item, ever.
CREATE TABLE moderation_flags (
  item_id  text COLLATE "C" NOT NULL,
  agent_id text COLLATE "C" NOT NULL,
  round    integer NOT NULL,
  doc      bytea NOT NULL,
  PRIMARY KEY (item_id, agent_id)
);

-- The audit log: append-only, entry ids sort by time.
CREATE TABLE moderation_log (
  id  text COLLATE "C" PRIMARY KEY,
  doc bytea NOT NULL
);
