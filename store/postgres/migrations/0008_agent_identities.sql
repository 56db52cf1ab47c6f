-- kfa schema 8: agents by OAuth identity. The first valid access token
-- of an (issuer, subject) creates its agent, or an operator links one
-- (kfa agent link); the pair is one agent, for good. The primary key is
-- the pair, compared byte for byte; an agent has at most one identity.
-- The agent's document holds the pair too (issuer, subject).
CREATE TABLE agent_identities (
  issuer   text COLLATE "C" NOT NULL,
  subject  text COLLATE "C" NOT NULL,
  agent_id text COLLATE "C" NOT NULL UNIQUE,
  PRIMARY KEY (issuer, subject)
);
