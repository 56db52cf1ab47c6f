package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/kfa-project/kfa/api"
)

// TaskQuery filters an operator task listing. Zero fields do not filter.
type TaskQuery struct {
	Owner     string // agent id
	State     string // a TASK_STATE_* name
	ContextID string
	Since     string // RFC 3339, inclusive
	PageSize  int
	PageToken string
}

// AdminTasks lists every agent's tasks, newest first.
func (c *Client) AdminTasks(ctx context.Context, tq TaskQuery) (api.TaskList, error) {
	q := url.Values{}
	for k, v := range map[string]string{"owner": tq.Owner, "state": tq.State, "contextId": tq.ContextID,
		"since": tq.Since, "pageToken": tq.PageToken} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if tq.PageSize > 0 {
		q.Set("pageSize", strconv.Itoa(tq.PageSize))
	}
	var out api.TaskList
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/tasks", query: q}, &out)
	return out, err
}

// AdminTask returns one task of any agent with its discussion.
func (c *Client) AdminTask(ctx context.Context, id string) (api.TaskDetail, error) {
	var out api.TaskDetail
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/tasks/" + url.PathEscape(id)}, &out)
	return out, err
}

// AdminCancelTask cancels any agent's task under the owner's rules.
func (c *Client) AdminCancelTask(ctx context.Context, id string) (api.CancelResult, error) {
	var out api.CancelResult
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/tasks/" + url.PathEscape(id) + "/cancel"}, &out)
	return out, err
}

// AdminDiscussions lists discussions; status is "", "open" or "answered".
func (c *Client) AdminDiscussions(ctx context.Context, status string, pageSize int, pageToken string) (api.DiscussionList, error) {
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
	var out api.DiscussionList
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/discussions", query: q}, &out)
	return out, err
}

// AdminDiscussion returns one discussion with all its replies, reading
// them a page at a time.
func (c *Client) AdminDiscussion(ctx context.Context, id string) (api.Discussion, error) {
	return allReplies(ctx, id, func(ctx context.Context, id string, pageSize int, pageToken string) (api.Discussion, error) {
		var out api.Discussion
		_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/discussions/" + url.PathEscape(id),
			query: pageQuery(pageSize, pageToken)}, &out)
		return out, err
	})
}

// ReplyAs posts a reply on behalf of agentID.
func (c *Client) ReplyAs(ctx context.Context, discussionID, agentID, body string) (api.ReplyResponse, error) {
	var out api.ReplyResponse
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/discussions/" + url.PathEscape(discussionID) + "/replies",
		body: api.OperatorReplyRequest{AgentID: agentID, Body: &body}}, &out)
	return out, err
}

// AgentInbox lists an agent's inbox, oldest first.
func (c *Client) AgentInbox(ctx context.Context, agentID string, unacked bool, pageSize int, pageToken string) (api.InboxList, error) {
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
	var out api.InboxList
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/agents/" + url.PathEscape(agentID) + "/inbox", query: q}, &out)
	return out, err
}

// Stats describes the database.
func (c *Client) Stats(ctx context.Context) (api.Stats, error) {
	var out api.Stats
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/stats"}, &out)
	return out, err
}

// Check runs kfa check on the database; pages asks a running server for
// bbolt's page check too, which holds its writes back while it runs (the
// CLI's own store always gets it).
func (c *Client) Check(ctx context.Context, pages bool) (api.CheckReport, error) {
	var out api.CheckReport
	q := url.Values{}
	if pages {
		q.Set("pages", "true")
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/check", query: q}, &out)
	return out, err
}

// Backup streams a consistent copy of the database file into w and
// returns its size. A stream shorter than announced is an error.
func (c *Client) Backup(ctx context.Context, w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	resp, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/backup"}, cw)
	if err != nil {
		return cw.n, fmt.Errorf("backup stream: %w", err)
	}
	if resp.ContentLength >= 0 && cw.n != resp.ContentLength {
		return cw.n, fmt.Errorf("backup stream ended after %d of %d bytes", cw.n, resp.ContentLength)
	}
	return cw.n, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
