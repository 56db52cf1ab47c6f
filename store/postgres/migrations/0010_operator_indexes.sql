-- kfa schema 10: nothing an ask writes serves the operator alone.
--
-- Every ask wrote the tasks row into eleven indexes and four counter
-- rows. Two indexes served only the operator's listings across owners
-- (tasks_all, tasks_state): those now merge the owners' own ranges
-- (list_all.go). Two more served an owner's listing of one context
-- (tasks_owner_ctx, tasks_owner_ctx_state), as did the two context
-- counters of every ask: a context holds few tasks, so tasks_ctx and a
-- filter on the owner and state serve those listings, and their totals
-- are counted, as on bbolt since its schema 6. discussions_author and
-- replies_author served only the operator's hide of everything an agent
-- wrote, which now reads the discussions and replies by id.
--
-- Dropping an index removes its file, whatever the table's size. The
-- context counters are two rows per context ever asked in: one DELETE
-- in this migration's transaction, as the earlier migrations rewrote
-- their tables.
DROP INDEX tasks_all;
DROP INDEX tasks_state;
DROP INDEX tasks_owner_ctx;
DROP INDEX tasks_owner_ctx_state;
DROP INDEX discussions_author;
DROP INDEX replies_author;
DELETE FROM counters WHERE name LIKE 't|o|%|c|%';
