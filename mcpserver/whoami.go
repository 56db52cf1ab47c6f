package mcpserver

import (
	"context"
	"errors"

	"github.com/kfa-project/kfa/agents"
)

// TokenRefused is what whoami says when the token of Deps.Token does
// not work.
const TokenRefused = "the bearer token kfa mcp was given (KFA_TOKEN or --token) is invalid, expired or revoked"

// whoami tells who the caller's bearer token belongs to. Over HTTP a bad
// token never gets here (Handler answers 401); over stdio the token is the
// one kfa mcp was given, checked at each call so that a revocation shows
// at once.
func (t *tools) whoami(ctx context.Context, _ WhoamiInput) (WhoamiOutput, error) {
	if a := callerOf(ctx).Agent; a != nil {
		return whoamiOf(*a), nil
	}
	if t.d.Token == "" {
		return WhoamiOutput{Authenticated: false}, nil
	}
	a, err := t.d.Agents.Authenticate(ctx, t.d.Token)
	if errors.Is(err, agents.ErrInvalidToken) {
		return WhoamiOutput{}, toolErrorf(OutcomeUnauthenticated, "%s", TokenRefused)
	}
	if err != nil {
		return WhoamiOutput{}, t.fail(ctx, err)
	}
	return whoamiOf(a), nil
}

func whoamiOf(a agents.Agent) WhoamiOutput {
	return WhoamiOutput{Authenticated: true, AgentID: a.ID, Name: a.Name, Scopes: a.ScopeStrings()}
}
