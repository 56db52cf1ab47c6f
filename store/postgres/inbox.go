package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/discussions"
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

// AckInbox implements discussions.Store, in two round trips: BEGIN and
// the agent's entries among ids under their row locks, then
// discussions.DecideAck, then the entries it acknowledges and COMMIT. It
// touches inbox entries only.
func (s *DB) AckInbox(ctx context.Context, agentID string, ids []string, at time.Time) (discussions.AckResult, error) {
	var (
		found map[string]discussions.InboxEntry
		out   discussions.AckOutcome
	)
	err := s.command(ctx, CmdAck, func(b *pgx.Batch) {
		found = map[string]discussions.InboxEntry{}
		b.Queue("SELECT doc FROM inbox WHERE agent_id = $1 AND id = ANY($2) ORDER BY id FOR UPDATE", agentID, ids).
			Query(func(rows pgx.Rows) error {
				for rows.Next() {
					var v []byte
					if err := rows.Scan(&v); err != nil {
						return err
					}
					e, err := decodeInbox(agentID, v)
					if err != nil {
						return err
					}
					found[e.ID] = e
				}
				return rows.Err()
			})
	}, func() (func(execer) error, error) {
		out = discussions.DecideAck(agentID, ids, found, at)
		if len(out.Acked) == 0 {
			return nil, nil
		}
		return func(w execer) error {
			for _, e := range out.Acked {
				if err := putInbox(ctx, w, e, false); err != nil {
					return err
				}
			}
			return nil
		}, nil
	})
	return out.Result, err
}

var _ discussions.Store = (*DB)(nil)
