package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Kinds of violation, the same names as the bbolt store's check (package
// store) uses for the same invariants.
const (
	VCounter    = "counter"
	VTask       = "task"
	VCompletion = "completion"
	VDiscussion = "discussion"
	VReply      = "reply"
	VInbox      = "inbox"
	VAgent      = "agent"
	VPush       = "push"
	VSession    = "session"
	VModeration = "moderation"
)

// MaxViolations bounds the violations a report lists; the rest are
// counted in Truncated.
const MaxViolations = 1000

// CheckReport is what Check found.
type CheckReport struct {
	SchemaVersion int
	// Examined counts the rows of each table.
	Examined   map[string]int
	Violations []Violation
	Truncated  int
}

// Violation is one broken invariant: its kind, the table and key of the
// row, the task concerned ("" for none) and what is wrong.
type Violation struct {
	Kind, Table, Key, TaskID, Detail string
}

// OK reports whether no violation was found.
func (r *CheckReport) OK() bool { return len(r.Violations) == 0 }

// doc reads a JSON document column as jsonb.
const doc = "convert_from(%s.doc, 'UTF8')::jsonb"

func docOf(alias string) string { return fmt.Sprintf(doc, alias) }

// invariant is one SQL query returning (key, task id, detail) for each
// row that breaks the rule.
type invariant struct {
	kind, table, query string
}

// expectedCounters counts, from the rows, what each counter must hold:
// the owners' task counters (ownerCounters) and the records and
// pending-delivery counters. Totals across owners have no counter.
const expectedCounters = `
SELECT 't|o|' || owner_id AS name, count(*) AS n FROM tasks GROUP BY owner_id
UNION ALL SELECT 't|o|' || owner_id || '|s|' || state, count(*) FROM tasks GROUP BY owner_id, state
UNION ALL SELECT 't|o|' || owner_id || '|c|' || context_id, count(*) FROM tasks GROUP BY owner_id, context_id
UNION ALL SELECT 't|o|' || owner_id || '|s|' || state || '|c|' || context_id, count(*) FROM tasks GROUP BY owner_id, state, context_id
UNION ALL SELECT 'records', count(*) FROM records
UNION ALL SELECT 'push|pending', count(*) FROM push_deliveries WHERE state = 'p'`

// completingReply is the reply id in a completed task's artifacts
// (artifact id reply-<ULID>).
const completingReply = `substring(convert_from(t.w_artifacts, 'UTF8') from '"reply-([0-9A-HJKMNP-TV-Z]{26})"')`

func invariants() []invariant {
	d, r, e := docOf("d"), docOf("r"), docOf("e")
	return []invariant{
		// The counters of the stores' own tables; not the commands' (c/: a
		// write plan's counters, which no row implies) nor the generic
		// kinds' (i/), checked next.
		{VCounter, "counters", `SELECT coalesce(c.name, x.name), '', 'counter is ' || coalesce(c.n, 0) || ', counted ' || coalesce(x.n, 0)
			FROM (SELECT name, n FROM counters WHERE name NOT LIKE 'i/%' AND name NOT LIKE 'c/%') c
			FULL JOIN (` + expectedCounters + `) x ON x.name = c.name
			WHERE coalesce(c.n, 0) <> coalesce(x.n, 0)`},
		// A generic counted index's counter (i/<index>/<hex of the leading
		// parts>, genericCounter) holds the number of its entries under
		// those parts: the parts end each in 0x00 0x01, so the prefix is
		// exact.
		{VCounter, "counters", `SELECT c.name, '', 'counter is ' || c.n || ', counted ' || (SELECT count(*) FROM kind_index k
				WHERE k.index_name = substring(c.name from '^i/(.*)/[0-9a-f]*$')
				AND substring(k.entry for length(decode(substring(c.name from '/([0-9a-f]*)$'), 'hex'))) =
					decode(substring(c.name from '/([0-9a-f]*)$'), 'hex'))
			FROM counters c WHERE c.name LIKE 'i/%' AND c.n <> (SELECT count(*) FROM kind_index k
				WHERE k.index_name = substring(c.name from '^i/(.*)/[0-9a-f]*$')
				AND substring(k.entry for length(decode(substring(c.name from '/([0-9a-f]*)$'), 'hex'))) =
					decode(substring(c.name from '/([0-9a-f]*)$'), 'hex'))`},
		{VCounter, "discussion_totals", `SELECT 'discussions|' || coalesce(t.status, x.status), '', 'total is ' || coalesce(t.n, 0) || ', counted ' || coalesce(x.n, 0)
			FROM (SELECT status, sum(n) AS n FROM discussion_totals GROUP BY status) t
			FULL JOIN (SELECT status, count(*) AS n FROM discussions WHERE NOT hidden GROUP BY status) x ON x.status = t.status
			WHERE coalesce(t.n, 0) <> coalesce(x.n, 0)`},
		{VAgent, "agents", `SELECT a.id, '', 'agent has no name key, so a duplicate of its name would be allowed'
			FROM agents a WHERE a.name_key IS NULL OR a.name_key = ''`},
		{VAgent, "agents", `SELECT a.id, '', 'agent is linked to ' || (` + docOf("a") + `->>'subject') || ' at ' || (` + docOf("a") + `->>'issuer') || ', which agent_identities does not map to it'
			FROM agents a WHERE ` + docOf("a") + ` ? 'issuer' AND NOT EXISTS (SELECT 1 FROM agent_identities i
				WHERE i.agent_id = a.id AND i.issuer = ` + docOf("a") + `->>'issuer' AND i.subject = ` + docOf("a") + `->>'subject')`},
		{VAgent, "agent_identities", `SELECT i.issuer || '|' || i.subject, '', 'identity mapped to agent ' || i.agent_id || ', which is not linked to it'
			FROM agent_identities i WHERE NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = i.agent_id
				AND ` + docOf("a") + `->>'issuer' = i.issuer AND ` + docOf("a") + `->>'subject' = i.subject)`},
		{VAgent, "credentials", `SELECT encode(c.digest, 'hex'), '', 'credential of agent ' || c.agent_id || ', which does not exist'
			FROM credentials c WHERE NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = c.agent_id)`},
		{VAgent, "rate_windows", `SELECT w.kind || '|' || w.agent_id, '', 'rate window of agent ' || w.agent_id || ', which does not exist'
			FROM rate_windows w WHERE NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = w.agent_id)`},
		{VTask, "tasks", `SELECT t.id, t.id, 'owner ' || t.owner_id || ' does not exist'
			FROM tasks t WHERE NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = t.owner_id)`},
		{VTask, "tasks", `SELECT t.id, t.id, 'discussion ' || t.discussion_id || ' does not exist'
			FROM tasks t WHERE NOT EXISTS (SELECT 1 FROM discussions d WHERE d.id = t.discussion_id)`},
		{VTask, "tasks", `SELECT t.id, t.id, 'state ' || t.state || ' is never set by ask-network' FROM tasks t
			WHERE t.state NOT IN ('TASK_STATE_WORKING', 'TASK_STATE_COMPLETED', 'TASK_STATE_CANCELED')`},
		{VCompletion, "tasks", `SELECT t.id, t.id, 'completed, but has no reply artifact (reply-<replyId>)' FROM tasks t
			WHERE t.state = 'TASK_STATE_COMPLETED' AND ` + completingReply + ` IS NULL`},
		{VCompletion, "tasks", `SELECT t.id, t.id, 'completed by reply ' || ` + completingReply + ` || ', which is not on discussion ' || t.discussion_id
			FROM tasks t WHERE t.state = 'TASK_STATE_COMPLETED' AND ` + completingReply + ` IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM replies r WHERE r.discussion_id = t.discussion_id AND r.id = ` + completingReply + `)`},
		// A qualifying reply completes the tasks its decision saw, and its
		// notice to their owner lists them: a waiting task such a notice
		// lists was seen and not completed. A reply that did not see it (one
		// committed before the task, while every answer was hidden) is no
		// fault, whatever the times say.
		{VCompletion, "tasks", `SELECT t.id, t.id, 'still working, but qualifying reply ' || r.id || ' by ' || r.author_id || ' saw it and should have completed it'
			FROM tasks t JOIN discussions d ON d.id = t.discussion_id JOIN LATERAL (
				SELECT r.id, r.author_id FROM replies r JOIN inbox e ON e.agent_id = t.owner_id AND ` + e + `->>'replyId' = r.id
				WHERE r.discussion_id = t.discussion_id AND r.author_id NOT IN (d.author_id, t.owner_id) AND ` + e + `->'taskIds' ? t.id
				ORDER BY r.id LIMIT 1) r ON true
			WHERE t.state = 'TASK_STATE_WORKING'`},
		{VDiscussion, "discussions", `SELECT d.id, '', 'author ' || (` + d + `->>'authorId') || ' does not exist' FROM discussions d
			WHERE NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = ` + d + `->>'authorId')`},
		{VDiscussion, "discussions", `SELECT d.id, '', 'status column says ' || d.status || ', the document ' || (` + d + `->>'status')
			FROM discussions d WHERE d.status <> ` + d + `->>'status' OR d.status NOT IN ('open', 'answered')`},
		{VDiscussion, "discussions", `SELECT d.id, '', 'replyCount is ' || coalesce(` + d + `->>'replyCount', '0') || ', ' || count(r.id) || ' replies are stored'
			FROM discussions d LEFT JOIN replies r ON r.discussion_id = d.id
			GROUP BY d.id, d.doc HAVING coalesce((` + d + `->>'replyCount')::bigint, 0) <> count(r.id)`},
		// Answered at the earliest visible qualifying reply, open without
		// one (discussions.Answered): no order of concurrent replies, hides
		// and unhides breaks it.
		{VDiscussion, "discussions", `SELECT d.id, '', CASE WHEN d.status = 'open' THEN 'open, but has a visible qualifying reply (by someone other than the author)'
				ELSE 'answered, but has no visible qualifying reply' END
			FROM discussions d WHERE (d.status = 'open') = EXISTS (SELECT 1 FROM replies r WHERE r.discussion_id = d.id
				AND NOT r.hidden AND r.author_id <> d.author_id)`},
		{VDiscussion, "discussions", `SELECT d.id, '', 'answeredAt is ' || coalesce(` + d + `->>'answeredAt', 'absent') ||
				', the earliest visible qualifying reply is from ' || (` + r + `->>'createdAt')
			FROM discussions d JOIN LATERAL (SELECT r.doc FROM replies r WHERE r.discussion_id = d.id AND NOT r.hidden
				AND r.author_id <> d.author_id ORDER BY (` + r + `->>'createdAt')::timestamptz LIMIT 1) r ON true
			WHERE d.status = 'answered'
			AND (` + d + `->>'answeredAt')::timestamptz IS DISTINCT FROM (` + r + `->>'createdAt')::timestamptz`},
		{VDiscussion, "discussions", `SELECT d.id, '', 'columns say hidden ' || d.hidden || ' and author ' || d.author_id || ', the document differs'
			FROM discussions d WHERE d.hidden <> coalesce((` + d + `->>'hidden')::boolean, false) OR d.author_id <> ` + d + `->>'authorId'`},
		{VDiscussion, "discussions", `SELECT d.id, '', 'hiddenReplies is ' || coalesce(` + d + `->>'hiddenReplies', '0') || ', ' || count(r.id) || ' replies are hidden'
			FROM discussions d LEFT JOIN replies r ON r.discussion_id = d.id AND r.hidden
			GROUP BY d.id, d.doc HAVING coalesce((` + d + `->>'hiddenReplies')::bigint, 0) <> count(r.id)`},
		{VDiscussion, "discussions", `SELECT d.id, '', 'the accepted reply ' || (` + d + `->>'acceptedReplyId') || ' is not a public reply by someone other than the asker'
			FROM discussions d WHERE ` + d + ` ? 'acceptedReplyId' AND NOT EXISTS (SELECT 1 FROM replies r WHERE r.discussion_id = d.id
				AND r.id = ` + d + `->>'acceptedReplyId' AND NOT r.hidden AND r.author_id <> ` + d + `->>'authorId')`},
		{VReply, "replies", `SELECT r.discussion_id || '|' || r.id, '', 'columns say hidden ' || r.hidden || ' and author ' || r.author_id || ', the document differs'
			FROM replies r WHERE r.hidden <> coalesce((` + r + `->>'hidden')::boolean, false) OR r.author_id <> ` + r + `->>'authorId'`},
		{VModeration, "moderation_items", `SELECT i.id, '', 'item says hidden ' || coalesce(` + docOf("i") + `->>'hidden', '""') || ', the content differs'
			FROM moderation_items i LEFT JOIN discussions d ON d.id = i.id LEFT JOIN replies r ON r.id = i.id
			WHERE coalesce(r.hidden, d.hidden) IS DISTINCT FROM (` + docOf("i") + ` ? 'hidden')`},
		{VModeration, "moderation_items", `SELECT i.id, '', 'item counts ' || i.flags || ' open flags, ' || count(f.agent_id) || ' are stored'
			FROM moderation_items i LEFT JOIN moderation_flags f ON f.item_id = i.id AND f.round = (` + docOf("i") + `->>'round')::int
			GROUP BY i.id, i.flags HAVING i.flags <> count(f.agent_id)`},
		{VModeration, "moderation_flags", `SELECT f.item_id || '|' || f.agent_id, '', 'flag on item ' || f.item_id || ', which does not exist'
			FROM moderation_flags f WHERE NOT EXISTS (SELECT 1 FROM moderation_items i WHERE i.id = f.item_id)`},
		{VReply, "replies", `SELECT r.discussion_id || '|' || r.id, '', 'reply on discussion ' || r.discussion_id || ', which does not exist'
			FROM replies r WHERE NOT EXISTS (SELECT 1 FROM discussions d WHERE d.id = r.discussion_id)`},
		{VReply, "replies", `SELECT r.discussion_id || '|' || r.id, '', 'reply record says id ' || (` + r + `->>'id') || ' on discussion ' || (` + r + `->>'discussionId')
			FROM replies r WHERE ` + r + `->>'id' <> r.id OR ` + r + `->>'discussionId' <> r.discussion_id`},
		{VInbox, "inbox", `SELECT e.agent_id || '|' || e.id, '', 'entry of agent ' || e.agent_id || ', which does not exist'
			FROM inbox e WHERE NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = e.agent_id)`},
		{VInbox, "inbox", `SELECT e.agent_id || '|' || e.id, '', 'entry names reply ' || (` + e + `->>'replyId') || ' on discussion ' || (` + e + `->>'discussionId') || ', which does not exist'
			FROM inbox e WHERE NOT EXISTS (SELECT 1 FROM replies r WHERE r.discussion_id = ` + e + `->>'discussionId' AND r.id = ` + e + `->>'replyId')`},
		{VInbox, "inbox", `SELECT e.agent_id || '|' || e.id, '', 'entry is ' || CASE WHEN e.acked THEN 'acknowledged' ELSE 'not acknowledged' END || ', its ackedAt says otherwise'
			FROM inbox e WHERE e.acked <> (` + e + ` ? 'ackedAt')`},
		{VPush, "push_configs", `SELECT c.task_id || '|' || c.id, c.task_id, 'push config ' || c.id || ' belongs to task ' || c.task_id || ', which does not exist'
			FROM push_configs c WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = c.task_id)`},
		{VPush, "push_deliveries", `SELECT p.id, p.task_id, 'pending delivery ' || p.id || ' points at task ' || p.task_id || ', which does not exist'
			FROM push_deliveries p WHERE p.state = 'p' AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = p.task_id)`},
		{VPush, "push_deliveries", `SELECT p.id, p.task_id, 'pending delivery ' || p.id || ' points at config ' || (` + docOf("p") + `->>'config') || ' of task ' || p.task_id || ', which does not exist'
			FROM push_deliveries p WHERE p.state = 'p' AND NOT EXISTS (SELECT 1 FROM push_configs c WHERE c.task_id = p.task_id AND c.id = ` + docOf("p") + `->>'config')`},
		{VPush, "push_deliveries", `SELECT p.id, p.task_id, 'pending delivery ' || p.id || ' has no due time' FROM push_deliveries p WHERE p.state = 'p' AND p.next_ms IS NULL`},
		{VSession, "web_sessions", `SELECT encode(s.digest, 'hex'), '', 'session of agent ' || (` + docOf("s") + `->>'agentId') || ', which does not exist'
			FROM web_sessions s WHERE NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = ` + docOf("s") + `->>'agentId')`},
	}
}

// Check verifies the database's invariants, the same as the bbolt store's
// check where they apply (indexes and the members map are PostgreSQL's own
// indexes there, so nothing of theirs can go stale), in one snapshot.
// The error is for a database that cannot be checked; what is wrong is in
// the report.
func (s *DB) Check(ctx context.Context) (CheckReport, error) {
	rep := CheckReport{Examined: map[string]int{}}
	err := s.readSnapshot(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM kfa_schema_migrations").Scan(&rep.SchemaVersion); err != nil {
			return err
		}
		for _, t := range append([]string{"counters"}, dataTables...) {
			var n int
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
				return err
			}
			rep.Examined[t] = n
		}
		for _, inv := range invariants() {
			if err := each(ctx, tx, inv.query, func(rows pgx.Rows) error {
				var v Violation
				if err := rows.Scan(&v.Key, &v.TaskID, &v.Detail); err != nil {
					return err
				}
				if len(rep.Violations) >= MaxViolations {
					rep.Truncated++
					return nil
				}
				v.Kind, v.Table = inv.kind, inv.table
				rep.Violations = append(rep.Violations, v)
				return nil
			}); err != nil {
				return fmt.Errorf("%s check on %s: %w", inv.kind, inv.table, err)
			}
		}
		return nil
	})
	if err != nil {
		return CheckReport{}, fmt.Errorf("postgres: check: %w", err)
	}
	return rep, nil
}
