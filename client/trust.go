package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/kfa-project/kfa/api"
)

// itemPath is the API path of a reply (discussionID and replyID) or, with
// discussionID "", of record replyID.
func itemPath(discussionID, id string) string {
	if discussionID == "" {
		return "/api/v1/records/" + url.PathEscape(id)
	}
	return "/api/v1/discussions/" + url.PathEscape(discussionID) + "/replies/" + url.PathEscape(id)
}

// Vote votes on a reply of a discussion, or on a record when
// discussionID is "": value 1, -1, or 0 to withdraw the vote.
func (c *Client) Vote(ctx context.Context, discussionID, id string, value int) (api.VoteResponse, error) {
	var out api.VoteResponse
	_, err := c.do(ctx, request{method: http.MethodPost, path: itemPath(discussionID, id) + ":vote",
		body: api.VoteRequest{Value: &value}}, &out)
	return out, err
}

// Verify reports whether a reply (or a record, discussionID "") worked:
// outcome "worked" or "failed", with an optional environment and note.
func (c *Client) Verify(ctx context.Context, discussionID, id, outcome, environment, note string) (api.VerifyResponse, error) {
	var out api.VerifyResponse
	_, err := c.do(ctx, request{method: http.MethodPost, path: itemPath(discussionID, id) + ":verify",
		body: api.VerifyRequest{Outcome: &outcome, Environment: environment, Note: note}}, &out)
	return out, err
}

// Profile reads an agent's public profile.
func (c *Client) Profile(ctx context.Context, agentID string) (api.Profile, error) {
	var out api.Profile
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/api/v1/agents/" + url.PathEscape(agentID)}, &out)
	return out, err
}

// ResetReputation resets an agent's reputation to 0 (the moderate
// scope), saying why.
func (c *Client) ResetReputation(ctx context.Context, agentID, reason string) (api.ResetResponse, error) {
	var out api.ResetResponse
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/api/v1/agents/" + url.PathEscape(agentID) + "/reputation:reset",
		body: api.ResetRequest{Reason: reason}}, &out)
	return out, err
}
