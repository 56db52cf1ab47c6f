package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/kfa-project/kfa/api"
)

// Ping identifies the process behind the admin channel.
func (c *Client) Ping(ctx context.Context) (api.Ping, error) {
	var out api.Ping
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/ping"}, &out)
	return out, err
}

// CreateAgent makes an agent; the answer holds its token, shown only here.
// A name another agent has is refused.
func (c *Client) CreateAgent(ctx context.Context, name string, scopes []string) (api.Agent, error) {
	return c.CreateAgentWith(ctx, api.CreateAgentRequest{Name: name, Scopes: scopes})
}

// CreateAgentWith makes the agent req describes (see CreateAgent).
func (c *Client) CreateAgentWith(ctx context.Context, req api.CreateAgentRequest) (api.Agent, error) {
	var out api.Agent
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/agents", body: req}, &out)
	return out, err
}

// RotateAgent issues a new token; old ones keep working for grace.
func (c *Client) RotateAgent(ctx context.Context, id string, grace time.Duration) (api.Agent, error) {
	var out api.Agent
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/agents/" + url.PathEscape(id) + "/rotate",
		body: api.RotateAgentRequest{GraceSeconds: int64(grace / time.Second)}}, &out)
	return out, err
}

// RevokeAgent disables an agent and deletes its tokens.
func (c *Client) RevokeAgent(ctx context.Context, id string) (api.Agent, error) {
	var out api.Agent
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/agents/" + url.PathEscape(id) + "/revoke"}, &out)
	return out, err
}

// LinkAgent links an agent to the OAuth identity (issuer, subject): that
// identity's access tokens act as the agent from then on.
func (c *Client) LinkAgent(ctx context.Context, id, issuer, subject string) (api.Agent, error) {
	out, err := c.LinkAgentWith(ctx, id, api.LinkAgentRequest{Issuer: issuer, Subject: subject})
	return out.Agent, err
}

// LinkAgentWith links an agent as req says: with req.Replace, it moves
// an identity whose agent was revoked to this agent, and the answer
// names the revoked agent.
func (c *Client) LinkAgentWith(ctx context.Context, id string, req api.LinkAgentRequest) (api.LinkedAgent, error) {
	var out api.LinkedAgent
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/agents/" + url.PathEscape(id) + "/link", body: req}, &out)
	return out, err
}

// Agents lists one page of agents, oldest first (pageSize 0: the
// server's default).
func (c *Client) Agents(ctx context.Context, pageSize int, pageToken string) (api.AgentList, error) {
	var out api.AgentList
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/agents", query: pageQuery(pageSize, pageToken)}, &out)
	return out, err
}
