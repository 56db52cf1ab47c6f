package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/discussions"
)

// putInbox writes an entry (insert or update); unacked says which.
func putInbox(ctx context.Context, tx pgx.Tx, e discussions.InboxEntry, unacked bool) error {
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
	page.Entries, page.Next, err = pageDocs(ctx, s.pool, q.PageSize, decode, func(e discussions.InboxEntry) string { return e.ID },
		page.Entries, query, q.AgentID, q.After, q.PageSize+1)
	return page, err
}

// AckInbox implements discussions.Store. It touches inbox entries only.
func (s *DB) AckInbox(ctx context.Context, agentID string, ids []string, at time.Time) (discussions.AckResult, error) {
	var res discussions.AckResult
	err := s.write(ctx, func(tx pgx.Tx) error {
		res = discussions.AckResult{Acked: []string{}, AlreadyAcked: []string{}, NotFound: []string{}}
		seen := make(map[string]bool, len(ids))
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			var v []byte
			err := tx.QueryRow(ctx, "SELECT doc FROM inbox WHERE agent_id = $1 AND id = $2 FOR UPDATE", agentID, id).Scan(&v)
			if err == pgx.ErrNoRows {
				res.NotFound = append(res.NotFound, id)
				continue
			}
			if err != nil {
				return err
			}
			e, err := decodeInbox(agentID, v)
			if err != nil {
				return err
			}
			if !e.AckedAt.IsZero() {
				res.AlreadyAcked = append(res.AlreadyAcked, id)
				continue
			}
			e.AckedAt = at
			if err := putInbox(ctx, tx, e, false); err != nil {
				return err
			}
			res.Acked = append(res.Acked, id)
		}
		return nil
	})
	return res, err
}

var _ discussions.Store = (*DB)(nil)
