-- kfa schema 11: every discussion answered by its earliest visible
-- qualifying reply (discussions.Answered: answered at that reply's time,
-- open when there is none). Until now a discussion was answered at the
-- time of the qualifying reply that committed first, which concurrent
-- replies could make a later one, and stayed answered when every answer
-- was hidden; kfa check now holds discussions to the rule. A discussion
-- that moves gets a discussion.changed event (ref status, note the new
-- status), so that every process's search index re-reads it.
WITH want AS (
  SELECT d.id, convert_from(d.doc, 'UTF8')::jsonb AS doc,
    (SELECT convert_from(r.doc, 'UTF8')::jsonb->>'createdAt' FROM replies r
      WHERE r.discussion_id = d.id AND NOT r.hidden AND r.author_id <> d.author_id
      ORDER BY (convert_from(r.doc, 'UTF8')::jsonb->>'createdAt')::timestamptz, r.id LIMIT 1) AS answered_at
  FROM discussions d
), moved AS (
  UPDATE discussions d
  SET status = CASE WHEN w.answered_at IS NULL THEN 'open' ELSE 'answered' END,
    doc = convert_to((CASE WHEN w.answered_at IS NULL
        THEN jsonb_set(w.doc - 'answeredAt', '{status}', '"open"')
        ELSE jsonb_set(jsonb_set(w.doc, '{status}', '"answered"'), '{answeredAt}', to_jsonb(w.answered_at)) END)::text, 'UTF8')
  FROM want w
  WHERE w.id = d.id AND (d.status <> CASE WHEN w.answered_at IS NULL THEN 'open' ELSE 'answered' END
    OR (w.doc->>'answeredAt')::timestamptz IS DISTINCT FROM w.answered_at::timestamptz)
  RETURNING d.id, d.status
)
INSERT INTO change_log (kind, subject, ref, note, at_ms, written_ms)
SELECT 'discussion.changed', m.id, 'status', m.status,
  (extract(epoch FROM clock_timestamp()) * 1000)::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint
FROM moved m ORDER BY m.id;
