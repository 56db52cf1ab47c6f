-- kfa schema 5: no row
-- is updated by every write, and agents are found by name.
--
-- The counters of totals across owners go ('t', 't|s|...', 't|c|...',
-- 'd', 'd|...', 'agents'): every process's every write waited on them.
-- Those totals are counted on demand now (store/postgres/totals.go); an
-- owner's counters ('t|o|...') stay, and so do the records' and the
-- outbox's.
DELETE FROM counters
WHERE name IN ('t', 'd', 'agents') OR name LIKE 't|s|%' OR name LIKE 't|c|%' OR name LIKE 'd|%';

-- The duplicate-name decision reads the agents of a name. name_key is
-- agents.NameKey(name), which is Go's case folding: kfa fills it for the
-- agents this migration finds (Open, after the migrations), and every
-- agent it writes has it.
ALTER TABLE agents ADD COLUMN name_key text COLLATE "C";
CREATE INDEX agents_name ON agents (name_key, id);
