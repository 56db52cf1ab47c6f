-- kfa schema 1: every store of storetest.Store. Ids sort bytewise
-- (COLLATE "C"), as bbolt keys do; times are Unix milliseconds unless a
-- document (doc, the JSON the bbolt store keeps too) holds them.

CREATE TABLE counters (
  name text COLLATE "C" PRIMARY KEY,
  n    bigint NOT NULL
);

CREATE TABLE agents (
  id  text COLLATE "C" PRIMARY KEY,
  doc bytea NOT NULL
);

CREATE TABLE credentials (
  digest   bytea PRIMARY KEY,
  agent_id text COLLATE "C" NOT NULL,
  doc      bytea NOT NULL
);
CREATE INDEX credentials_agent ON credentials (agent_id);

-- rate windows: kind 'a' (asks) or 'r' (replies); tat in Unix nanoseconds.
CREATE TABLE rate_windows (
  kind     text NOT NULL,
  agent_id text COLLATE "C" NOT NULL,
  tat_ns   bigint NOT NULL,
  PRIMARY KEY (kind, agent_id)
);

CREATE TABLE discussions (
  id     text COLLATE "C" PRIMARY KEY,
  status text NOT NULL,
  doc    bytea NOT NULL
);
CREATE INDEX discussions_status ON discussions (status, id);

CREATE TABLE replies (
  discussion_id text COLLATE "C" NOT NULL,
  id            text COLLATE "C" NOT NULL,
  doc           bytea NOT NULL,
  PRIMARY KEY (discussion_id, id)
);

-- tasks: the header columns, and the wire JSON in the pieces of
-- tasks.WireJSON, encoded once when the task is written.
CREATE TABLE tasks (
  id            text COLLATE "C" PRIMARY KEY,
  context_id    text COLLATE "C" NOT NULL,
  owner_id      text COLLATE "C" NOT NULL,
  discussion_id text COLLATE "C" NOT NULL,
  message_id    text COLLATE "C" NOT NULL,
  state         text NOT NULL,
  status_ms     bigint NOT NULL,
  created_ms    bigint NOT NULL,
  w_head        bytea NOT NULL,
  w_status      bytea NOT NULL,
  w_artifacts   bytea NOT NULL,
  w_metadata    bytea NOT NULL,
  w_history     bytea NOT NULL,
  w_nhistory    integer NOT NULL,
  CONSTRAINT tasks_owner_message UNIQUE (owner_id, message_id)
);
-- keyset pagination: newest status first, ties by id descending
CREATE INDEX tasks_all ON tasks (status_ms DESC, id DESC);
CREATE INDEX tasks_state ON tasks (state, status_ms DESC, id DESC);
CREATE INDEX tasks_ctx ON tasks (context_id, status_ms DESC, id DESC);
CREATE INDEX tasks_owner ON tasks (owner_id, status_ms DESC, id DESC);
CREATE INDEX tasks_owner_state ON tasks (owner_id, state, status_ms DESC, id DESC);
CREATE INDEX tasks_owner_ctx ON tasks (owner_id, context_id, status_ms DESC, id DESC);
CREATE INDEX tasks_owner_ctx_state ON tasks (owner_id, context_id, state, status_ms DESC, id DESC);
-- a discussion's members, and its working tasks (what a reply completes)
CREATE INDEX tasks_discussion ON tasks (discussion_id, owner_id, id);
CREATE INDEX tasks_discussion_working ON tasks (discussion_id, id) WHERE state = 'TASK_STATE_WORKING';

CREATE TABLE inbox (
  agent_id text COLLATE "C" NOT NULL,
  id       text COLLATE "C" NOT NULL,
  acked    boolean NOT NULL,
  doc      bytea NOT NULL,
  PRIMARY KEY (agent_id, id)
);
CREATE INDEX inbox_unacked ON inbox (agent_id, id) WHERE NOT acked;

CREATE TABLE web_sessions (
  digest     bytea PRIMARY KEY,
  expires_ms bigint NOT NULL,
  doc        bytea NOT NULL
);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_ms, digest);

CREATE TABLE push_configs (
  task_id text COLLATE "C" NOT NULL,
  id      text COLLATE "C" NOT NULL,
  doc     bytea NOT NULL,
  PRIMARY KEY (task_id, id)
);

-- push deliveries: state 'p' pending (due at next_ms), 'd' delivered,
-- 'f' failed.
CREATE TABLE push_deliveries (
  id          text COLLATE "C" PRIMARY KEY,
  task_id     text COLLATE "C" NOT NULL,
  state       text NOT NULL,
  next_ms     bigint,
  destination text NOT NULL,
  doc         bytea NOT NULL
);
CREATE INDEX push_deliveries_due ON push_deliveries (next_ms, id) WHERE state = 'p';
CREATE INDEX push_deliveries_task ON push_deliveries (task_id, id);
CREATE INDEX push_deliveries_state ON push_deliveries (state, id);

CREATE TABLE signing_keys (
  created_ms bigint NOT NULL,
  id         text COLLATE "C" NOT NULL,
  doc        bytea NOT NULL,
  PRIMARY KEY (created_ms, id)
);
