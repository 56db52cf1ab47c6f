package mcpserver

import (
	"context"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/service"
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
	c, err := t.d.Service.Authenticate(ctx, service.Credential{Token: t.d.Token, Sent: true}, true)
	if e, ok := a2a.AsError(err); ok && e.Kind == a2a.Unauthenticated {
		return WhoamiOutput{}, toolErrorf(OutcomeUnauthenticated, "%s", TokenRefused)
	}
	if err != nil {
		return WhoamiOutput{}, t.fail(ctx, err)
	}
	return whoamiOf(*c.Agent), nil
}

func whoamiOf(a agents.Agent) WhoamiOutput {
	return WhoamiOutput{Authenticated: true, AgentID: a.ID, Name: a.Name, Scopes: a.ScopeStrings()}
}
