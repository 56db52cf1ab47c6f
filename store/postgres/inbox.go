package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/storage"
)

// putInboxes writes new entries, all unacknowledged, in one statement.
func putInboxes(ctx context.Context, w execer, es []discussions.InboxEntry) error {
	if len(es) == 0 {
		return nil
	}
	agentIDs, ids, docs := make([]string, len(es)), make([]string, len(es)), make([][]byte, len(es))
	for i, e := range es {
		v, err := json.Marshal(e) // the agent id is in the key
		if err != nil {
			return err
		}
		agentIDs[i], ids[i], docs[i] = e.AgentID, e.ID, v
	}
	_, err := w.Exec(ctx, `INSERT INTO inbox (agent_id, id, acked, doc)
		SELECT a, i, false, d FROM unnest($1::text[], $2::text[], $3::bytea[]) AS e(a, i, d)
		ON CONFLICT (agent_id, id) DO UPDATE SET acked = excluded.acked, doc = excluded.doc`, agentIDs, ids, docs)
	return err
}

// putInbox writes an entry (insert or update); unacked says which.
func putInbox(ctx context.Context, tx execer, e discussions.InboxEntry, unacked bool) error {
	v, err := json.Marshal(e) // the agent id is in the key
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO inbox (agent_id, id, acked, doc) VALUES ($1, $2, $3, $4)
		ON CONFLICT (agent_id, id) DO UPDATE SET acked = excluded.acked, doc = excluded.doc`, e.AgentID, e.ID, !unacked, v)
	return err
}

func decodeInbox(agentID string, v []byte) (discussions.InboxEntry, error) {
	var e discussions.InboxEntry
	if err := json.Unmarshal(v, &e); err != nil {
		return e, fmt.Errorf("postgres: decode inbox entry: %w", err)
	}
	e.AgentID = agentID
	return e, nil
}

// ListInbox implements discussions.Store: oldest first.
func (s *DB) ListInbox(ctx context.Context, q discussions.InboxQuery) (discussions.InboxPage, error) {
	page := discussions.InboxPage{Entries: []discussions.InboxEntry{}}
	query := "SELECT doc FROM inbox WHERE agent_id = $1 AND id > $2 ORDER BY id LIMIT $3"
	if q.UnackedOnly {
		query = "SELECT doc FROM inbox WHERE agent_id = $1 AND id > $2 AND NOT acked ORDER BY id LIMIT $3"
	}
	decode := func(v []byte) (discussions.InboxEntry, error) { return decodeInbox(q.AgentID, v) }
	var err error
	page.Entries, page.Next, err = pageDocs(ctx, s, q.PageSize, decode, func(e discussions.InboxEntry) string { return e.ID },
		page.Entries, query, q.AgentID, q.After, q.PageSize+1)
	return page, err
}

var _ discussions.Store = (*DB)(nil)

// The schema's Inbox, in inbox (acked: left out of the schema's
// InboxUnacked).
func init() {
	mapped[commands.Inbox] = &inboxTable{table[discussions.InboxEntry]{
		kind: commands.Inbox, name: "inbox", key: []column{{"t.agent_id", convText}, {"t.id", convText}},
		cols: "t.agent_id, t.doc",
		read: func(row pgx.Row, _ bool) (discussions.InboxEntry, error) {
			var (
				agent string
				v     []byte
			)
			if err := row.Scan(&agent, &v); err != nil {
				return discussions.InboxEntry{}, err
			}
			return decodeInbox(agent, v)
		},
		indexes: map[storage.Ix]tindex{commands.InboxUnacked: {where: "NOT t.acked"}},
		write: func(w *pgWrites, _, e *discussions.InboxEntry) error {
			_, unacked := commands.InboxUnacked.Entry(e)
			return putInbox(w.ctx, w.w, *e, unacked)
		},
	}}
}

// inboxTable writes a reply's new entries in one statement.
type inboxTable struct{ table[discussions.InboxEntry] }

func (t *inboxTable) putNew(w *pgWrites, recs []any) error {
	es := make([]discussions.InboxEntry, len(recs))
	for i, r := range recs {
		es[i] = *r.(*discussions.InboxEntry)
		if _, unacked := commands.InboxUnacked.Entry(&es[i]); !unacked {
			// Not new entries as a reply writes them: one by one.
			for _, r := range recs {
				if err := t.table.put(w, nil, r); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return putInboxes(w.ctx, w.w, es)
}
