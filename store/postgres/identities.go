package postgres

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/agents"
)

// identityLock is the advisory lock key space of OAuth identities: a link
// or a provisioning holds its identity's lock (hashed) until it commits,
// so two first tokens of one identity, on any process, decide one after
// the other, and the second finds the first's agent. It is taken before
// any other lock of the command (an agent's row, a name's lock), and no
// command holds one of those while it waits for an identity's.
const identityLock = "kfa agent identity|"

// identityLockKey is the text an identity's lock hashes.
// (An issuer URL holds no control character, so "\n" ends it; text sent
// to PostgreSQL holds no zero byte.)
func identityLockKey(id agents.Identity) string { return identityLock + id.Issuer + "\n" + id.Subject }

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

// putIdentity queues the link of an agent's identity.
func putIdentity(ctx context.Context, w execer, a agents.Agent) error {
	_, err := w.Exec(ctx, "INSERT INTO agent_identities (issuer, subject, agent_id) VALUES ($1, $2, $3)", a.Issuer, a.Subject, a.ID)
	return err
}

// LinkAgent implements agents.Store, in two round trips: BEGIN, the
// identity's lock, the agent and the agent the identity is linked to
// under their row locks (in id order, the one order two agents are
// locked in), then agents.DecideLink, then the writes and COMMIT.
func (s *DB) LinkAgent(ctx context.Context, l agents.Link) (agents.LinkOutcome, error) {
	var (
		st  agents.LinkState
		out agents.LinkOutcome
	)
	err := s.command(ctx, CmdLinkAgent, func(b *pgx.Batch) {
		st = agents.LinkState{}
		b.Queue("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", identityLockKey(l.Identity))
		b.Queue(`SELECT doc, id = $1, id = (SELECT agent_id FROM agent_identities WHERE issuer = $2 AND subject = $3) FROM agents
			WHERE id = $1 OR id = (SELECT agent_id FROM agent_identities WHERE issuer = $2 AND subject = $3)
			ORDER BY id FOR NO KEY UPDATE`, l.AgentID, l.Identity.Issuer, l.Identity.Subject).
			Query(func(rows pgx.Rows) error {
				for rows.Next() {
					var (
						v              []byte
						isAgent, isOld *bool
					)
					if err := rows.Scan(&v, &isAgent, &isOld); err != nil {
						return err
					}
					a, err := decodeAgent(v)
					if err != nil {
						return err
					}
					if isAgent != nil && *isAgent {
						st.Agent = &a
					}
					if isOld != nil && *isOld {
						st.Linked = &a
					}
				}
				return rows.Err()
			})
	}, func() (func(execer) error, error) {
		var err error
		if out, err = agents.DecideLink(st, l); err != nil || !out.Changed {
			return nil, err
		}
		return func(w execer) error {
			if err := putAgent(ctx, w, out.Agent); err != nil {
				return err
			}
			if out.Replaced == nil {
				if err := putIdentity(ctx, w, out.Agent); err != nil {
					return err
				}
			} else {
				// The identity moves off the revoked agent.
				if err := putAgent(ctx, w, *out.Replaced); err != nil {
					return err
				}
				if _, err := w.Exec(ctx, "UPDATE agent_identities SET agent_id = $3 WHERE issuer = $1 AND subject = $2",
					l.Identity.Issuer, l.Identity.Subject, out.Agent.ID); err != nil {
					return err
				}
			}
			return appendEvents(ctx, w, out.Events, l.At)
		}, nil
	})
	return out, err
}

// ProvisionAgent implements agents.Store, in two round trips: BEGIN, the
// identity's lock, its agent, the locks of the names and whether each
// is taken, then agents.DecideProvision, then the writes and COMMIT.
func (s *DB) ProvisionAgent(ctx context.Context, p agents.Provision) (agents.Agent, bool, error) {
	var (
		st  agents.ProvisionState
		out agents.ProvisionOutcome
	)
	err := s.command(ctx, CmdProvisionAgent, func(b *pgx.Batch) {
		st = agents.ProvisionState{NameTaken: make([]bool, len(p.Names))}
		b.Queue("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", identityLockKey(p.Identity))
		b.Queue(`SELECT a.doc FROM agent_identities i JOIN agents a ON a.id = i.agent_id
			WHERE i.issuer = $1 AND i.subject = $2`, p.Identity.Issuer, p.Identity.Subject).QueryRow(scanDoc(&st.Linked, decodeAgent))
		// The names' locks in one order (sorted), so that two
		// provisionings whose names overlap never wait on each other in
		// opposite orders; a create holds one name's lock and waits on
		// nothing after it.
		keys := make([]string, len(p.Names))
		for i, n := range p.Names {
			keys[i] = agents.NameKey(n)
		}
		for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
			b.Queue("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", nameLock+k)
		}
		for i, k := range keys {
			b.Queue("SELECT EXISTS (SELECT 1 FROM agents WHERE name_key = $1)", k).QueryRow(func(row pgx.Row) error {
				return row.Scan(&st.NameTaken[i])
			})
		}
	}, func() (func(execer) error, error) {
		var err error
		if out, err = agents.DecideProvision(st, p); err != nil || !out.Created {
			return nil, err
		}
		return func(w execer) error {
			if err := putAgent(ctx, w, out.Agent); err != nil {
				return err
			}
			if err := putIdentity(ctx, w, out.Agent); err != nil {
				return err
			}
			return appendEvents(ctx, w, out.Events, out.Agent.CreatedAt)
		}, nil
	})
	return out.Agent, out.Created, err
}
