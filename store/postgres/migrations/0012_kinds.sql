-- kfa schema 12: the kinds of record that no store maps (package storage).
-- A kind described once, in Go, is kept here by every PostgreSQL store
-- without a table of its own: each record under its encoded key
-- (storage.Key.Encode: parts, a zero byte escaped as 0x00 0xFF, each part
-- ended by 0x00 0x01, so that bytes sort as keys do and a prefix of parts
-- is a prefix of bytes), and each index entry (its leading parts, then the
-- record's key, encoded) pointing at its record. A counted index counts
-- its entries in counters, under 'i/<index>/' and the hex of the parts.
-- It may run again over itself (a test that rewinds the schema does).
CREATE TABLE IF NOT EXISTS kind_records (
  kind text COLLATE "C" NOT NULL,
  key  bytea NOT NULL,
  doc  bytea NOT NULL,
  PRIMARY KEY (kind, key)
);

CREATE TABLE IF NOT EXISTS kind_index (
  index_name text COLLATE "C" NOT NULL,
  entry      bytea NOT NULL,
  kind       text COLLATE "C" NOT NULL,
  key        bytea NOT NULL,
  PRIMARY KEY (index_name, entry)
);
-- A record's entries, for a put that replaces it or a delete.
CREATE INDEX IF NOT EXISTS kind_index_record ON kind_index (kind, key);
