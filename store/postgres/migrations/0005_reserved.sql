-- kfa schema 5: reserved for the change log's followers (issue 24), which
-- are written beside this migration and take this number when they merge.
SELECT 1;
