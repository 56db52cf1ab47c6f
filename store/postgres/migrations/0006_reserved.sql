-- kfa schema 6: reserved for the decisions (issue 24), which are written
-- beside this migration and take this number when they merge.
SELECT 1;
