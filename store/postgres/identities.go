package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/agents"
)

// AgentByIdentity implements agents.Store: one read.
func (s *DB) AgentByIdentity(ctx context.Context, id agents.Identity) (agents.Agent, error) {
	var v []byte
	err := s.readRow(ctx, `SELECT a.doc FROM agent_identities i JOIN agents a ON a.id = i.agent_id
		WHERE i.issuer = $1 AND i.subject = $2`, []any{id.Issuer, id.Subject}, &v)
	if errors.Is(err, pgx.ErrNoRows) {
		return agents.Agent{}, agents.ErrNotLinked
	}
	if err != nil {
		return agents.Agent{}, err
	}
	return decodeAgent(v)
}
