-- kfa schema 13: the ACME client's state (--acme-domain), shared by every
-- process on the database so that they serve one certificate: the
-- account key, each certificate with its private key, the answers to
-- pending challenges. A row without a value is a claim: one process is
-- obtaining that certificate until claimed_until. IF NOT EXISTS: the
-- tests of earlier migrations roll the schema back by its version and
-- migrate again, which runs this one again.
CREATE TABLE IF NOT EXISTS tls_cache (
  key           text COLLATE "C" PRIMARY KEY,
  value         bytea,
  claimed_until timestamptz,
  updated_at    timestamptz NOT NULL DEFAULT now()
);
