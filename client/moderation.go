package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/moderation"
)

// Flag flags a discussion (replyID "") or one of its replies for
// moderation, with reason (spam, wrong, unsafe, off-topic, other) and an
// optional note.
func (c *Client) Flag(ctx context.Context, discussionID, replyID, reason, note string) (api.FlagResponse, error) {
	path := "/api/v1/discussions/" + url.PathEscape(discussionID)
	if replyID != "" {
		path += "/replies/" + url.PathEscape(replyID)
	}
	var out api.FlagResponse
	_, err := c.do(ctx, request{method: http.MethodPost, path: path + ":flag", body: api.FlagRequest{Reason: &reason, Note: note}}, &out)
	return out, err
}

// Accept marks a reply as the answer the asker accepts.
func (c *Client) Accept(ctx context.Context, discussionID, replyID string) (api.AcceptResponse, error) {
	var out api.AcceptResponse
	_, err := c.do(ctx, request{method: http.MethodPost,
		path: "/api/v1/discussions/" + url.PathEscape(discussionID) + "/replies/" + url.PathEscape(replyID) + ":accept"}, &out)
	return out, err
}

// ModerationQueue lists the items waiting for review, most flagged first
// (limit 0: the server's default).
func (c *Client) ModerationQueue(ctx context.Context, limit int) (api.Queue, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out api.Queue
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/moderation/queue", query: q}, &out)
	return out, err
}

// ModerationLog lists the moderation log, newest first.
func (c *Client) ModerationLog(ctx context.Context, pageSize int, pageToken string) (api.LogPage, error) {
	var out api.LogPage
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/moderation/log", query: pageQuery(pageSize, pageToken)}, &out)
	return out, err
}

// Moderate runs action (hide, unhide or dismiss) on an item as the
// operator.
func (c *Client) Moderate(ctx context.Context, action moderation.Action, req api.ModerationRequest) (moderation.Result, error) {
	var out moderation.Result
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/moderation/" + string(action), body: req}, &out)
	return out, err
}

// HideAgentContent hides every discussion and reply agentID wrote.
func (c *Client) HideAgentContent(ctx context.Context, agentID string, req api.HideAuthorRequest) (moderation.AuthorResult, error) {
	var out moderation.AuthorResult
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/agents/" + url.PathEscape(agentID) + "/hide-content", body: req}, &out)
	return out, err
}
