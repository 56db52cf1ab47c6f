package sessions

import (
	"slices"

	"github.com/kfa-project/kfa/agents"
)

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

// ProviderScopes are the scopes a sign-in of agent a through a provider
// holds, the provider having granted it granted: read and post as far
// as both the provider's grant and the agent allow (post implies read,
// as agents.Agent.Has says), and moderate when the agent holds it, which
// kfa never asks a provider for: only an operator gives it. A provider's
// grant is read once, at sign-in: a person granted more, or less, at the
// provider has it at their next sign-in.
func ProviderScopes(a agents.Agent, granted []agents.Scope) []agents.Scope {
	var out []agents.Scope
	for _, s := range []agents.Scope{agents.ScopeRead, agents.ScopePost} {
		if slices.Contains(granted, s) && a.Has(s) {
			out = append(out, s)
		}
	}
	if slices.Contains(a.Scopes, agents.ScopeModerate) {
		out = append(out, agents.ScopeModerate)
	}
	return out
}

// Within narrows agent a, as it is now, to the scopes of session s: a
// provider's sign-in does no more than it was granted, nor more than
// its agent may do now. A token sign-in (no Scopes) is its agent.
func (s Session) Within(a agents.Agent) agents.Agent {
	if s.Scopes == nil {
		return a
	}
	var out []agents.Scope
	for _, sc := range s.Scopes {
		if a.Has(sc) {
			out = append(out, sc)
		}
	}
	a.Scopes = out
	return a
}
