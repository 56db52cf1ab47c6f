package service

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/tasks"
)

// runAsk is the ask-network skill: the new (or retried) task. Outside a
// stream it needs configuration.returnImmediately; on a stream the server
// holds the stream open instead of a request.
func (s *Service) runAsk(ctx context.Context, c Caller, req *a2a.SendMessageRequest, in msgInput, streaming bool) (answer, error) {
	t, view, err := s.askTask(ctx, c, req, in, !streaming)
	if err != nil {
		return answer{}, err
	}
	return answer{task: &t, view: view}, nil
}

// askTask runs ask-network for an authorized caller: the new (or retried)
// task and how to show it. needReturnImmediately is false over a stream,
// where the server holds the stream open instead of a request.
func (s *Service) askTask(ctx context.Context, c Caller, req *a2a.SendMessageRequest, in msgInput, needReturnImmediately bool) (tasks.Task, tasks.View, error) {
	ag := c.Agent // authorize made sure of it
	cfg := req.Configuration
	if needReturnImmediately && (cfg == nil || cfg.ReturnImmediately == nil || !*cfg.ReturnImmediately) {
		return tasks.Task{}, tasks.View{}, a2a.Errorf(a2a.UnsupportedOperation,
			"ask-network requires configuration.returnImmediately=true: a community reply can take days, so kfa "+
				"returns the WORKING task at once instead of holding the request open; poll GET /a2a/v1/tasks/{id} "+
				"(GetTask over JSON-RPC), list tasks, or hold a stream with message:stream")
	}
	view := tasks.FullView
	if cfg != nil && cfg.HistoryLength != nil {
		if *cfg.HistoryLength < 0 {
			return tasks.Task{}, tasks.View{}, a2a.BadParam("configuration.historyLength", "must not be negative")
		}
		n := int(*cfg.HistoryLength)
		view.HistoryLength = &n
	}
	// Without a data part the text is the question (metadata.skill chose ask-network).
	ai := tasks.AskInput{Asker: tasks.Asker{ID: ag.ID, Name: ag.Name}, Message: *req.Message, Question: strings.TrimSpace(in.text)}
	if in.data != nil {
		for _, f := range []struct {
			key string
			dst *string
		}{
			{"question", &ai.Question}, {"details", &ai.Details}, {"kind", &ai.Kind},
			{"product", &ai.Product}, {"environment", &ai.Environment}, {"discussionId", &ai.JoinDiscussionID},
		} {
			v, err := str(in.data, f.key)
			if err != nil {
				return tasks.Task{}, tasks.View{}, err
			}
			if v != "" || f.key != "question" {
				*f.dst = v
			}
		}
	}
	var err error
	if ai.NoForward, err = noForward(in.data); err != nil {
		return tasks.Task{}, tasks.View{}, err
	}
	if ai.Origin, err = forwardedFrom(req.Message.Metadata); err != nil {
		return tasks.Task{}, tasks.View{}, err
	}
	p, err := s.inlinePush(cfg)
	if err != nil {
		return tasks.Task{}, tasks.View{}, err
	}
	ai.Push = p
	t, _, err := s.deps.Tasks.Ask(ctx, ai)
	if err != nil {
		s.noteAskQuota(ctx, ag.ID)
		return tasks.Task{}, tasks.View{}, s.askError(ai.JoinDiscussionID, err)
	}
	return t, view, nil
}

// noForward reads the ask data's "forward": false, which keeps the
// question from this server's peers.
func noForward(data map[string]json.RawMessage) (bool, error) {
	raw, ok := data["forward"]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return false, nil
	}
	var v bool
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, a2a.BadParam("data.forward", "must be true or false")
	}
	return !v, nil
}

// forwardedFrom reads where a question a peer forwarded here was asked
// first (the message metadata's kfaOrigin); nil for none.
func forwardedFrom(meta json.RawMessage) (*discussions.Origin, error) {
	if len(meta) == 0 {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return nil, nil
	}
	raw, ok := m[peers.OriginMetadataKey]
	if !ok {
		return nil, nil
	}
	var o struct {
		Server       string `json:"server"`
		DiscussionID string `json:"discussionId"`
	}
	field := "message.metadata." + peers.OriginMetadataKey
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, a2a.BadParam(field, "must be {\"server\": a URL, \"discussionId\": an id}")
	}
	origin, err := peers.ParseOrigin(o.Server, o.DiscussionID)
	if err != nil {
		return nil, toA2A(err, field+".")
	}
	return origin, nil
}

// askError explains a failed join in terms of the request's fields. A
// join of no discussion, or of a hidden one, is 404 (ToError's words for
// a *discussions.NotFoundError), the same for both, as moderation.md says:
// a reader cannot tell a hidden discussion from one that never was.
func (s *Service) askError(discussionID string, err error) error {
	switch {
	case isErr(err, discussions.ErrAnswered):
		return a2a.Errorf(a2a.UnsupportedOperation,
			"discussion %s is already answered; read it at %s/api/v1/discussions/%s, or ask a new question",
			discussionID, s.cfg.PublicURL, discussionID).With("discussionId", discussionID)
	}
	return toA2A(err, "data.")
}

// noteAskQuota reports, for the RateLimit headers, what the asker has left
// of the ask rate after a refused ask (an answered one notes its quota from
// its decision, without a read: tasks.Service.Ask). A failure to read costs
// the headers only.
func (s *Service) noteAskQuota(ctx context.Context, agentID string) {
	u, err := s.deps.Tasks.Usage(ctx, agentID)
	if err == nil && u.Asks != nil {
		ratelimit.Note(ctx, *u.Asks)
	}
}
