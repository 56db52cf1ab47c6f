package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/agents"
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

// nameLock is the advisory lock key space of agent names: a create holds
// the lock of its name's key (hashed) until it commits, so two creates of
// one name, on any process, decide one after the other.
const nameLock = "kfa agent name|"

// CreateAgent implements agents.Store, in two round trips: BEGIN, the
// name's lock and the agents of the name, then agents.DecideCreate, then
// the writes and COMMIT.
func (s *DB) CreateAgent(ctx context.Context, c agents.Create) error {
	var same []string
	key := agents.NameKey(c.Agent.Name)
	return s.command(ctx, CmdCreateAgent, func(b *pgx.Batch) {
		same = nil
		b.Queue("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", nameLock+key)
		b.Queue("SELECT id FROM agents WHERE name_key = $1 ORDER BY id LIMIT 1", key).Query(func(rows pgx.Rows) error {
			var err error
			same, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
	}, func() (func(execer) error, error) {
		out, err := agents.DecideCreate(same, c)
		if err != nil {
			return nil, err
		}
		return func(w execer) error {
			if err := putAgent(ctx, w, out.Agent); err != nil {
				return err
			}
			if err := putCred(ctx, w, out.Credential); err != nil {
				return err
			}
			return appendEvents(ctx, w, out.Events, out.Agent.CreatedAt)
		}, nil
	})
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

// loadCredentials queues the loads of a credential command: the agent
// under its row lock, then its credentials.
func loadCredentials(b *pgx.Batch, id string, st *agents.CredentialState) {
	*st = agents.CredentialState{}
	b.Queue("SELECT doc FROM agents WHERE id = $1 FOR NO KEY UPDATE", id).QueryRow(scanDoc(&st.Agent, decodeAgent))
	b.Queue("SELECT digest, doc FROM credentials WHERE agent_id = $1 ORDER BY digest", id).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var d, v []byte
			if err := rows.Scan(&d, &v); err != nil {
				return err
			}
			var c agents.Credential
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("postgres: decode credential: %w", err)
			}
			copy(c.Digest[:], d)
			st.Credentials = append(st.Credentials, c)
		}
		return rows.Err()
	})
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

// RotateCredential implements agents.Store, in two round trips: BEGIN,
// the agent under its row lock and its credentials, then
// agents.DecideRotate, then the writes and COMMIT.
func (s *DB) RotateCredential(ctx context.Context, c agents.Credential, keepUntil time.Time) (agents.Agent, error) {
	var (
		st  agents.CredentialState
		out agents.RotateOutcome
	)
	err := s.command(ctx, CmdRotateAgent, func(b *pgx.Batch) { loadCredentials(b, c.AgentID, &st) }, func() (func(execer) error, error) {
		var err error
		if out, err = agents.DecideRotate(st, c, keepUntil); err != nil {
			return nil, err
		}
		return func(w execer) error {
			if len(out.Delete) > 0 {
				if _, err := w.Exec(ctx, "DELETE FROM credentials WHERE digest = ANY($1)", digests(out.Delete)); err != nil {
					return err
				}
			}
			for _, k := range append(out.Keep, out.Add) {
				if err := putCred(ctx, w, k); err != nil {
					return err
				}
			}
			return appendEvents(ctx, w, out.Events, c.CreatedAt)
		}, nil
	})
	return out.Agent, err
}

// RevokeAgent implements agents.Store, in two round trips: BEGIN, the
// agent under its row lock and its credentials, then agents.DecideRevoke,
// then the writes and COMMIT.
func (s *DB) RevokeAgent(ctx context.Context, id string, at time.Time) (agents.Agent, error) {
	var (
		st  agents.CredentialState
		out agents.RevokeOutcome
	)
	err := s.command(ctx, CmdRevokeAgent, func(b *pgx.Batch) { loadCredentials(b, id, &st) }, func() (func(execer) error, error) {
		var err error
		if out, err = agents.DecideRevoke(st, at); err != nil || !out.Changed {
			return nil, err
		}
		return func(w execer) error {
			if len(out.Delete) > 0 {
				if _, err := w.Exec(ctx, "DELETE FROM credentials WHERE digest = ANY($1)", digests(out.Delete)); err != nil {
					return err
				}
			}
			if err := putAgent(ctx, w, out.Agent); err != nil {
				return err
			}
			return appendEvents(ctx, w, out.Events, at)
		}, nil
	})
	return out.Agent, err
}

// digests are ds as the bytea values of the credentials' key.
func digests(ds []agents.Digest) [][]byte {
	out := make([][]byte, len(ds))
	for i := range ds {
		out[i] = ds[i][:]
	}
	return out
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
