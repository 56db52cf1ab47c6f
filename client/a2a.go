package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
)

// Card fetches the agent card and its ETag.
func (c *Client) Card(ctx context.Context) (a2a.AgentCard, string, error) {
	var card a2a.AgentCard
	resp, err := c.do(ctx, request{method: http.MethodGet, path: "/.well-known/agent-card.json"}, &card)
	if err != nil {
		return card, "", err
	}
	return card, resp.Header.Get("ETag"), nil
}

// SendMessage calls A2A SendMessage.
func (c *Client) SendMessage(ctx context.Context, req a2a.SendMessageRequest) (a2a.SendMessageResponse, error) {
	var out a2a.SendMessageResponse
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/a2a/v1/message:send", body: req, a2a: true}, &out)
	return out, err
}

// GetTask calls A2A GetTask; historyLength nil asks for all history.
func (c *Client) GetTask(ctx context.Context, id string, historyLength *int) (a2a.Task, error) {
	var out a2a.Task
	q := url.Values{}
	if historyLength != nil {
		q.Set("historyLength", strconv.Itoa(*historyLength))
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/a2a/v1/tasks/" + url.PathEscape(id), query: q, a2a: true}, &out)
	return out, err
}

// ListTasks calls A2A ListTasks with the query parameters in q
// (contextId, status, pageSize, pageToken, historyLength,
// statusTimestampAfter, includeArtifacts).
func (c *Client) ListTasks(ctx context.Context, q url.Values) (a2a.ListTasksResponse, error) {
	var out a2a.ListTasksResponse
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/a2a/v1/tasks", query: q, a2a: true}, &out)
	return out, err
}

// CancelTask calls A2A CancelTask.
func (c *Client) CancelTask(ctx context.Context, id string) (a2a.Task, error) {
	var out a2a.Task
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/a2a/v1/tasks/" + url.PathEscape(id) + ":cancel", a2a: true}, &out)
	return out, err
}

// Whoami returns the calling agent.
func (c *Client) Whoami(ctx context.Context) (api.Agent, error) {
	var out api.Agent
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/api/v1/whoami"}, &out)
	return out, err
}

// Discussions lists public discussions; status is "", "open" or "answered".
func (c *Client) Discussions(ctx context.Context, status string, pageSize int, pageToken string) (api.DiscussionList, error) {
	var out api.DiscussionList
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	if pageSize > 0 {
		q.Set("pageSize", strconv.Itoa(pageSize))
	}
	if pageToken != "" {
		q.Set("pageToken", pageToken)
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/api/v1/discussions", query: q}, &out)
	return out, err
}

// Discussion returns one discussion with all its replies, reading them a
// page at a time.
func (c *Client) Discussion(ctx context.Context, id string) (api.Discussion, error) {
	return allReplies(ctx, id, c.DiscussionPage)
}

// DiscussionPage returns one discussion with one page of its replies,
// oldest first (pageSize 0: the server's default).
func (c *Client) DiscussionPage(ctx context.Context, id string, pageSize int, pageToken string) (api.Discussion, error) {
	var out api.Discussion
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/api/v1/discussions/" + url.PathEscape(id),
		query: pageQuery(pageSize, pageToken)}, &out)
	return out, err
}

// pageQuery is the query of a paged read.
func pageQuery(pageSize int, pageToken string) url.Values {
	q := url.Values{}
	if pageSize > 0 {
		q.Set("pageSize", strconv.Itoa(pageSize))
	}
	if pageToken != "" {
		q.Set("pageToken", pageToken)
	}
	return q
}

// maxReplyPages bounds how many pages allReplies reads.
const maxReplyPages = 1000

// allReplies reads a discussion and every page of its replies with page.
func allReplies(ctx context.Context, id string, page func(context.Context, string, int, string) (api.Discussion, error)) (api.Discussion, error) {
	d, err := page(ctx, id, 100, "")
	for n := 0; err == nil && d.NextPageToken != "" && n < maxReplyPages; n++ {
		var next api.Discussion
		if next, err = page(ctx, id, 100, d.NextPageToken); err == nil {
			d.Replies = append(d.Replies, next.Replies...)
			d.NextPageToken = next.NextPageToken
		}
	}
	return d, err
}

// Reply posts a reply on a discussion.
func (c *Client) Reply(ctx context.Context, discussionID, body string) (api.ReplyResponse, error) {
	var out api.ReplyResponse
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/api/v1/discussions/" + url.PathEscape(discussionID) + "/replies",
		body: api.ReplyRequest{Body: &body}}, &out)
	return out, err
}

// Inbox lists the calling agent's inbox.
func (c *Client) Inbox(ctx context.Context, unacked bool, pageSize int, pageToken string) (api.InboxList, error) {
	var out api.InboxList
	q := url.Values{}
	if unacked {
		q.Set("unacked", "true")
	}
	if pageSize > 0 {
		q.Set("pageSize", strconv.Itoa(pageSize))
	}
	if pageToken != "" {
		q.Set("pageToken", pageToken)
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/api/v1/inbox", query: q}, &out)
	return out, err
}

// Ack acknowledges inbox entries.
func (c *Client) Ack(ctx context.Context, ids []string) (api.AckResponse, error) {
	var out api.AckResponse
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/api/v1/inbox:ack", body: api.AckRequest{IDs: ids}}, &out)
	return out, err
}

// Info fetches GET /a2a/info, the anonymous connectivity check.
func (c *Client) Info(ctx context.Context) (api.Info, error) {
	var out api.Info
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/a2a/info"}, &out)
	return out, err
}
