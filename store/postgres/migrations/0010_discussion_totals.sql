-- kfa schema 10: the public discussion totals, exact. ListDiscussions'
-- totalSize counts the discussions readers see (not hidden) of each
-- status, as the bbolt store's counters do; it was a count up to 10,000
-- and a planner estimate above.
--
-- n is the change of the listed discussions of status made through the
-- connections whose backend pid falls in shard (pid % 16): a status's
-- total is the sum of its shards. A transaction updates only the rows
-- of the shard of its own connection, which no other open transaction
-- holds unless two connections' pids share a shard, so asks from many
-- connections and processes do not queue on one counter row. A shard's
-- n can go below 0 (a discussion opened through one connection and
-- answered through another); only the sum means anything.
CREATE TABLE discussion_totals (
  status text NOT NULL,
  shard  integer NOT NULL,
  n      bigint NOT NULL,
  PRIMARY KEY (status, shard)
);

-- The totals follow the rows, in the transaction that writes them,
-- whatever writes them (a command, a moderation, kfa migrate's load):
-- an insert or a delete is counted once per statement (COPY loads a
-- million discussions with one counter write); an update only when it
-- moves a discussion between statuses or in or out of sight, which the
-- trigger's WHEN tells without calling the function.
CREATE FUNCTION kfa_discussion_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO discussion_totals (status, shard, n)
      SELECT status, pg_backend_pid() % 16, count(*) FROM kfa_new WHERE NOT hidden GROUP BY status ORDER BY status
      ON CONFLICT (status, shard) DO UPDATE SET n = discussion_totals.n + excluded.n;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO discussion_totals (status, shard, n)
      SELECT status, pg_backend_pid() % 16, -count(*) FROM kfa_old WHERE NOT hidden GROUP BY status ORDER BY status
      ON CONFLICT (status, shard) DO UPDATE SET n = discussion_totals.n + excluded.n;
  ELSE
    INSERT INTO discussion_totals (status, shard, n)
      SELECT s, pg_backend_pid() % 16, sum(d) FROM (
        SELECT OLD.status, -1 WHERE NOT OLD.hidden
        UNION ALL SELECT NEW.status, 1 WHERE NOT NEW.hidden) c(s, d)
      GROUP BY s HAVING sum(d) <> 0 ORDER BY s
      ON CONFLICT (status, shard) DO UPDATE SET n = discussion_totals.n + excluded.n;
  END IF;
  RETURN NULL;
END $$;

-- CREATE TRIGGER locks discussions against writes until this migration
-- commits, so the count below misses no write in flight, and every write
-- after it is counted by the triggers.
CREATE TRIGGER discussions_inserted AFTER INSERT ON discussions
  REFERENCING NEW TABLE AS kfa_new FOR EACH STATEMENT EXECUTE FUNCTION kfa_discussion_totals();
CREATE TRIGGER discussions_deleted AFTER DELETE ON discussions
  REFERENCING OLD TABLE AS kfa_old FOR EACH STATEMENT EXECUTE FUNCTION kfa_discussion_totals();
CREATE TRIGGER discussions_moved AFTER UPDATE ON discussions
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.hidden IS DISTINCT FROM NEW.hidden)
  EXECUTE FUNCTION kfa_discussion_totals();

INSERT INTO discussion_totals (status, shard, n)
  SELECT status, 0, count(*) FROM discussions WHERE NOT hidden GROUP BY status;
