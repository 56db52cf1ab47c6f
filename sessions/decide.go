package sessions

import "github.com/kfa-project/kfa/agents"

// The decisions of the session commands. Each is pure: it takes what the
// store loaded and returns the effects for the store to write.

// CreateOutcome is what starting a session writes.
type CreateOutcome struct {
	Session Session
	// Purge are the expired sessions to delete with it.
	Purge []Session
}

// DecideCreate decides storing s for agent (as loaded in the command's
// transaction, nil when no agent has s.AgentID: a revoked one gets no
// session, agents.ErrRevoked), given the sessions that expire first (in
// expiry order, at most PurgeBatch of them): those expired at or before
// s.CreatedAt go in the same transaction, so a sign-in never pays for a
// long backlog at once and nothing else ever has to sweep.
func DecideCreate(agent *agents.Agent, oldest []Session, s Session) (CreateOutcome, error) {
	if err := agents.MayAct(agent); err != nil {
		return CreateOutcome{}, err
	}
	out := CreateOutcome{Session: s}
	for _, o := range oldest {
		if len(out.Purge) == PurgeBatch || o.ExpiresAt.After(s.CreatedAt) {
			break
		}
		out.Purge = append(out.Purge, o)
	}
	return out, nil
}

// DecideEnd decides ending the session found (nil when none has the
// digest): whether there is one to delete. Ending none is no error.
func DecideEnd(found *Session) (del bool) { return found != nil }
