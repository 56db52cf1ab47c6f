package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/storage"
)

// putAgent writes a (its name never changes once created).
func putAgent(ctx context.Context, w execer, a agents.Agent) error {
	v, err := json.Marshal(a)
	if err != nil {
		return err
	}
	_, err = w.Exec(ctx, `INSERT INTO agents (id, doc, name_key) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`, a.ID, v, agents.NameKey(a.Name))
	return err
}

func putCred(ctx context.Context, tx execer, c agents.Credential) error {
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

// AgentsNamed implements agents.Store in one statement: a row of ids
// for each name, in the names' order.
func (s *DB) AgentsNamed(ctx context.Context, names []string, limit int) ([][]string, error) {
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = agents.NameKey(n)
	}
	var out [][]string
	err := s.readStatement(ctx, func(q rowQuerier) error {
		rows, err := q.Query(ctx, `SELECT ARRAY(SELECT id FROM agents WHERE name_key = k.key ORDER BY id LIMIT $2)
			FROM unnest($1::text[]) WITH ORDINALITY k(key, i) ORDER BY k.i`, keys, limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[[]string])
		return err
	})
	if err == nil && len(out) != len(names) {
		err = fmt.Errorf("postgres: agents of %d names, %d answers", len(names), len(out))
	}
	return out, err
}

// GetAgent implements agents.Store in one statement.
func (s *DB) GetAgent(ctx context.Context, id string) (agents.Agent, error) {
	var v []byte
	if err := s.readRow(ctx, "SELECT doc FROM agents WHERE id = $1", []any{id}, &v); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return agents.Agent{}, agents.ErrNotFound
		}
		return agents.Agent{}, err
	}
	return decodeAgent(v)
}

// ListAgents implements agents.Store: oldest first (agent ids are ULIDs),
// the page and its total (counted: the operator's) in one statement.
func (s *DB) ListAgents(ctx context.Context, after string, limit int) (agents.Page, error) {
	page := agents.Page{Agents: []agents.Agent{}}
	var err error
	page.Agents, page.Next, page.Total, err = totalPage(ctx, s, limit, decodeAgent, func(a agents.Agent) string { return a.ID },
		page.Agents, "SELECT count(*) FROM agents", "SELECT doc FROM agents WHERE id > $1 ORDER BY id LIMIT $2", after, limit+1)
	return page, err
}

// Authenticate implements agents.Store.
func (s *DB) Authenticate(ctx context.Context, d agents.Digest) (agents.Agent, agents.Credential, error) {
	var (
		credDoc, agentDoc []byte
		a                 agents.Agent
		c                 agents.Credential
	)
	err := s.readRow(ctx, `SELECT c.doc, a.doc FROM credentials c JOIN agents a ON a.id = c.agent_id
		WHERE c.digest = $1`, []any{d[:]}, &credDoc, &agentDoc)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, c, agents.ErrInvalidToken
	}
	if err != nil {
		return a, c, err
	}
	if err := json.Unmarshal(credDoc, &c); err != nil {
		return a, c, fmt.Errorf("postgres: decode credential: %w", err)
	}
	c.Digest = d
	a, err = decodeAgent(agentDoc)
	return a, c, err
}

var _ agents.Store = (*DB)(nil)

// The schema's agents and rate windows.
func init() {
	mapped[commands.Agents] = &table[agents.Agent]{
		kind: commands.Agents, name: "agents", key: []column{{"t.id", convText}},
		cols: "t.doc", read: docScan(decodeAgent), lock: "FOR NO KEY UPDATE",
		indexes: map[storage.Ix]tindex{
			commands.AgentsByName: {cols: []column{{"t.name_key", convText}}},
			commands.AgentsByIdentity: {from: "agent_identities i JOIN agents t ON t.id = i.agent_id",
				cols: []column{{"i.issuer", convText}, {"i.subject", convText}}},
		},
		write: writeAgent,
	}
	mapped[commands.Credentials] = &table[agents.Credential]{
		kind: commands.Credentials, name: "credentials", key: []column{{"t.digest", convBytes}},
		cols: "t.digest, t.doc",
		read: func(row pgx.Row, _ bool) (agents.Credential, error) {
			var d, v []byte
			if err := row.Scan(&d, &v); err != nil {
				return agents.Credential{}, err
			}
			var c agents.Credential
			if err := json.Unmarshal(v, &c); err != nil {
				return c, fmt.Errorf("postgres: decode credential: %w", err)
			}
			copy(c.Digest[:], d)
			return c, nil
		},
		indexes: map[storage.Ix]tindex{commands.CredentialsByAgent: {cols: []column{{"t.agent_id", convText}}}},
		write:   func(w *pgWrites, _, c *agents.Credential) error { return putCred(w.ctx, w.w, *c) },
		remove: func(w *pgWrites, old *agents.Credential) error {
			return w.exec("DELETE FROM credentials WHERE digest = $1", old.Digest[:])
		},
	}
	mapped[commands.Windows] = &table[commands.Window]{
		kind: commands.Windows, name: "rate_windows", key: []column{{"t.kind", convText}, {"t.agent_id", convText}},
		cols: "t.kind, t.agent_id, t.tat_ns",
		read: func(row pgx.Row, _ bool) (commands.Window, error) {
			var (
				w  commands.Window
				ns int64
			)
			err := row.Scan(&w.Limit, &w.AgentID, &ns)
			w.At = time.Unix(0, ns).UTC()
			return w, err
		},
		write: func(w *pgWrites, _, win *commands.Window) error {
			return putWindow(w.ctx, w.w, win.Limit, win.AgentID, win.At)
		},
	}
}

// writeAgent queues a, which was old (nil: a new agent), and moves its
// identity's link as the schema's AgentsByIdentity holds it.
func writeAgent(w *pgWrites, old, a *agents.Agent) error {
	if err := putAgent(w.ctx, w.w, *a); err != nil {
		return err
	}
	var was, is storage.Key
	if old != nil {
		if e, ok := commands.AgentsByIdentity.Entry(old); ok {
			was = e
		}
	}
	if e, ok := commands.AgentsByIdentity.Entry(a); ok {
		is = e
	}
	if was.Compare(is) == 0 {
		return nil
	}
	if was != nil {
		if err := w.exec("DELETE FROM agent_identities WHERE issuer = $1 AND subject = $2 AND agent_id = $3", was[0], was[1], a.ID); err != nil {
			return err
		}
	}
	if is != nil {
		return w.exec("INSERT INTO agent_identities (issuer, subject, agent_id) VALUES ($1, $2, $3)", is[0], is[1], a.ID)
	}
	return nil
}
