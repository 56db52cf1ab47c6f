-- kfa schema 3: claims of push deliveries (push.Claimer), so that each
-- attempt is made by one of the processes sharing the database; a claim
-- runs out at claim_until_ms (Unix ms), or when the attempt is recorded.
ALTER TABLE push_deliveries ADD COLUMN claim_until_ms bigint;
