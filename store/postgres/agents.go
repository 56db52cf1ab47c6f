package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
)

const counterAgents = "agents"

func putAgent(ctx context.Context, tx pgx.Tx, a agents.Agent) error {
	v, err := json.Marshal(a)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO agents (id, doc) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`, a.ID, v)
	return err
}

func putCred(ctx context.Context, tx pgx.Tx, c agents.Credential) error {
	v, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO credentials (digest, agent_id, doc) VALUES ($1, $2, $3)
		ON CONFLICT (digest) DO UPDATE SET agent_id = excluded.agent_id, doc = excluded.doc`, c.Digest[:], c.AgentID, v)
	return err
}

func decodeAgent(v []byte) (agents.Agent, error) {
	var a agents.Agent
	if err := json.Unmarshal(v, &a); err != nil {
		return a, fmt.Errorf("postgres: decode agent: %w", err)
	}
	return a, nil
}

// getAgent reads an agent; lock adds FOR UPDATE.
func getAgent(ctx context.Context, tx pgx.Tx, id string, lock bool) (agents.Agent, error) {
	q := "SELECT doc FROM agents WHERE id = $1"
	if lock {
		q += " FOR UPDATE"
	}
	var v []byte
	if err := tx.QueryRow(ctx, q, id).Scan(&v); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return agents.Agent{}, agents.ErrNotFound
		}
		return agents.Agent{}, err
	}
	return decodeAgent(v)
}

// CreateAgent implements agents.Store.
func (s *DB) CreateAgent(ctx context.Context, a agents.Agent, c agents.Credential) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		if err := putAgent(ctx, tx, a); err != nil {
			return err
		}
		if err := putCred(ctx, tx, c); err != nil {
			return err
		}
		if err := appendEvents(ctx, tx, []changelog.Event{{Kind: changelog.AgentCreated, ID: a.ID, At: a.CreatedAt}}, a.CreatedAt); err != nil {
			return err
		}
		return deltas{counterAgents: 1}.apply(ctx, tx)
	})
}

// GetAgent implements agents.Store.
func (s *DB) GetAgent(ctx context.Context, id string) (agents.Agent, error) {
	var a agents.Agent
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		a, err = getAgent(ctx, tx, id, false)
		return err
	})
	return a, err
}

// ListAgents implements agents.Store: oldest first (agent ids are ULIDs).
func (s *DB) ListAgents(ctx context.Context, after string, limit int) (agents.Page, error) {
	page := agents.Page{Agents: []agents.Agent{}}
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		if page.Total, err = readCounter(ctx, tx, counterAgents); err != nil {
			return err
		}
		page.Agents, page.Next, err = pageDocs(ctx, tx, limit, decodeAgent, func(a agents.Agent) string { return a.ID },
			page.Agents[:0], "SELECT doc FROM agents WHERE id > $1 ORDER BY id LIMIT $2", after, limit+1)
		return err
	})
	return page, err
}

// RotateCredential implements agents.Store.
func (s *DB) RotateCredential(ctx context.Context, c agents.Credential, keepUntil time.Time) (agents.Agent, error) {
	var out agents.Agent
	err := s.write(ctx, func(tx pgx.Tx) error {
		a, err := getAgent(ctx, tx, c.AgentID, true)
		if err != nil {
			return err
		}
		if !a.Active() {
			return agents.ErrDisabled
		}
		rows, err := tx.Query(ctx, "SELECT digest, doc FROM credentials WHERE agent_id = $1 FOR UPDATE", c.AgentID)
		if err != nil {
			return err
		}
		type row struct {
			Digest []byte
			Doc    []byte
		}
		olds, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
		if err != nil {
			return err
		}
		for _, r := range olds {
			var old agents.Credential
			err := json.Unmarshal(r.Doc, &old)
			copy(old.Digest[:], r.Digest)
			if keepUntil.IsZero() || err != nil || !old.ValidAt(c.CreatedAt) {
				if _, err := tx.Exec(ctx, "DELETE FROM credentials WHERE digest = $1", r.Digest); err != nil {
					return err
				}
				continue
			}
			if old.ExpiresAt.IsZero() || old.ExpiresAt.After(keepUntil) {
				old.ExpiresAt = keepUntil
			}
			if err := putCred(ctx, tx, old); err != nil {
				return err
			}
		}
		out = a
		if err := putCred(ctx, tx, c); err != nil {
			return err
		}
		return appendEvents(ctx, tx, []changelog.Event{agentRotated(a.ID, c.CreatedAt, keepUntil)}, c.CreatedAt)
	})
	return out, err
}

// RevokeAgent implements agents.Store.
func (s *DB) RevokeAgent(ctx context.Context, id string, at time.Time) (agents.Agent, error) {
	var out agents.Agent
	err := s.write(ctx, func(tx pgx.Tx) error {
		a, err := getAgent(ctx, tx, id, true)
		if err != nil {
			return err
		}
		out = a
		if !a.Active() {
			return nil // already revoked: nothing to do
		}
		if _, err := tx.Exec(ctx, "DELETE FROM credentials WHERE agent_id = $1", id); err != nil {
			return err
		}
		a.DisabledAt = at
		out = a
		if err := putAgent(ctx, tx, a); err != nil {
			return err
		}
		return appendEvents(ctx, tx, []changelog.Event{{Kind: changelog.AgentRevoked, ID: a.ID, At: at}}, at)
	})
	return out, err
}

// Authenticate implements agents.Store.
func (s *DB) Authenticate(ctx context.Context, d agents.Digest) (agents.Agent, agents.Credential, error) {
	var (
		credDoc, agentDoc []byte
		a                 agents.Agent
		c                 agents.Credential
	)
	err := s.pool.QueryRow(ctx, `SELECT c.doc, a.doc FROM credentials c JOIN agents a ON a.id = c.agent_id
		WHERE c.digest = $1`, d[:]).Scan(&credDoc, &agentDoc)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, c, agents.ErrInvalidToken
	}
	if err != nil {
		return a, c, unavailable(err)
	}
	if err := json.Unmarshal(credDoc, &c); err != nil {
		return a, c, fmt.Errorf("postgres: decode credential: %w", err)
	}
	c.Digest = d
	a, err = decodeAgent(agentDoc)
	return a, c, err
}

var _ agents.Store = (*DB)(nil)

// agentRotated is the log event of a rotation at at whose older
// credentials end at keepUntil (zero: at once).
func agentRotated(id string, at, keepUntil time.Time) changelog.Event {
	e := changelog.Event{Kind: changelog.AgentRotated, ID: id, At: at}
	if !keepUntil.IsZero() {
		e.Ref = keepUntil.UTC().Format(time.RFC3339Nano)
	}
	return e
}
