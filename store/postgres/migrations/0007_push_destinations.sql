-- kfa schema 7: the push worker walks the pending deliveries by
-- destination. The walk is a skip scan: one probe of this index per
-- destination finds its earliest pending delivery, so a destination
-- with a flood of due deliveries costs a walk one step and hides no
-- other; a sender then reads one destination's due deliveries, in due
-- order, from the same index.
CREATE INDEX push_deliveries_destination ON push_deliveries (destination, next_ms, id) WHERE state = 'p';
-- One destination has one request in flight across every process: a
-- sender holds a session advisory lock on the destination while it sends
-- to it, instead of claiming each delivery; a killed process's locks end
-- with its connection, not after a lease.
ALTER TABLE push_deliveries DROP COLUMN claim_until_ms;
