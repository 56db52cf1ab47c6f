package federation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/peers"
)

// Ask is a question to forward: the local discussion and this server's
// public URL.
type Ask struct {
	DiscussionID string
	Question     string
	Details      string
	Filters      discussions.Filters
	Server       string
}

// Asked is the peer's task for a forwarded ask.
type Asked struct {
	TaskID       string
	DiscussionID string
	State        a2a.TaskState
	// StatusAt is the task's status time, as the peer wrote it.
	StatusAt string
}

// Ask asks the peer's ask-network skill a, as this server's agent there,
// with returnImmediately: the peer answers its WORKING task at once (or
// the task of the first send of this messageId).
func (c *Client) Ask(ctx context.Context, a Ask) (Asked, error) {
	data, err := json.Marshal(map[string]any{"action": "ask", "question": a.Question, "details": a.Details,
		"kind": a.Filters.Kind, "product": a.Filters.Product, "environment": a.Filters.Environment})
	if err != nil {
		return Asked{}, err
	}
	meta, err := json.Marshal(map[string]any{peers.OriginMetadataKey: map[string]string{"server": a.Server, "discussionId": a.DiscussionID}})
	if err != nil {
		return Asked{}, err
	}
	yes := true
	req := a2a.SendMessageRequest{
		Message: &a2a.Message{MessageID: peers.MessageID(a.DiscussionID), Role: a2a.RoleUser,
			Parts: []a2a.Part{a2a.DataPart(data)}, Metadata: meta},
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: &yes},
	}
	var resp a2a.SendMessageResponse
	if err := c.call(ctx, http.MethodPost, "/a2a/v1/message:send", nil, req, true, maxAnswerBytes, &resp); err != nil {
		return Asked{}, fmt.Errorf("ask: %w", err)
	}
	if resp.Task == nil || resp.Task.ID == "" {
		return Asked{}, errors.New("ask: the peer answered no task")
	}
	return Asked{TaskID: resp.Task.ID, DiscussionID: metadataString(resp.Task.Metadata, "discussionId"), State: resp.Task.Status.State,
		StatusAt: resp.Task.Status.Timestamp}, nil
}

// Answer is a forwarded ask's task completed on the peer: the reply that
// completed it.
type Answer struct {
	TaskID       string
	DiscussionID string // on the peer
	ReplyID      string // on the peer
	AuthorName   string
	Body         string
	At           time.Time // the task's status time
}

// maxTaskPage is the page size of Completed.
const maxTaskPage = 100

// Completed lists the tasks of this server's agent on the peer that
// completed after since (a page at a time: pageToken from the previous
// call's next), each with the reply that completed it.
func (c *Client) Completed(ctx context.Context, since time.Time, pageToken string) ([]Answer, string, error) {
	q := url.Values{"status": {string(a2a.TaskStateCompleted)}, "pageSize": {strconv.Itoa(maxTaskPage)},
		"includeArtifacts": {"true"}, "historyLength": {"0"}}
	if !since.IsZero() {
		q.Set("statusTimestampAfter", a2a.FormatTime(since))
	}
	if pageToken != "" {
		q.Set("pageToken", pageToken)
	}
	var resp a2a.ListTasksResponse
	if err := c.call(ctx, http.MethodGet, "/a2a/v1/tasks", q, nil, true, 4*maxAnswerBytes, &resp); err != nil {
		return nil, "", fmt.Errorf("list the completed tasks: %w", err)
	}
	var out []Answer
	for _, t := range resp.Tasks {
		if a, ok := answerOf(t); ok {
			out = append(out, a)
		}
	}
	return out, resp.NextPageToken, nil
}

// answerOf reads the reply a completed task's artifact holds (kfa's
// shape: the reply's text, then a data part naming it); ok is false for
// a task that holds none.
func answerOf(t a2a.Task) (Answer, bool) {
	if t.Status.State != a2a.TaskStateCompleted || len(t.Artifacts) == 0 {
		return Answer{}, false
	}
	a := Answer{TaskID: t.ID}
	for _, p := range t.Artifacts[0].Parts {
		switch {
		case p.Text != nil && a.Body == "":
			a.Body = *p.Text
		case len(p.Data) > 0:
			var ref struct {
				DiscussionID string `json:"discussionId"`
				ReplyID      string `json:"replyId"`
				AuthorName   string `json:"authorName"`
			}
			if json.Unmarshal(p.Data, &ref) != nil {
				return Answer{}, false
			}
			a.DiscussionID, a.ReplyID, a.AuthorName = ref.DiscussionID, ref.ReplyID, ref.AuthorName
		}
	}
	at, err := time.Parse(time.RFC3339Nano, t.Status.Timestamp)
	if err != nil || a.ReplyID == "" || a.Body == "" {
		return Answer{}, false
	}
	a.At = at.UTC()
	return a, true
}

// metadataString is the string member key of a metadata object ("" when
// absent).
func metadataString(m json.RawMessage, key string) string {
	var v map[string]any
	if json.Unmarshal(m, &v) != nil {
		return ""
	}
	s, _ := v[key].(string)
	return s
}
