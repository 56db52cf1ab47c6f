package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/tasks"
)

// MaxParts bounds the parts of one message.
const MaxParts = 16

// SendMessage runs one A2A SendMessage: a search answered with a direct
// Message, or an ask answered with a Task.
func (s *Service) SendMessage(ctx context.Context, c Caller, req *a2a.SendMessageRequest) (a2a.SendMessageResponse, error) {
	if req == nil || req.Message == nil {
		return a2a.SendMessageResponse{}, a2a.BadParam("message", "is required")
	}
	m := req.Message
	if err := validateMessage(m); err != nil {
		return a2a.SendMessageResponse{}, err
	}
	if m.TaskID != "" {
		return a2a.SendMessageResponse{}, s.messageToTask(ctx, c, m.TaskID)
	}
	in, err := s.readInput(req)
	if err != nil {
		return a2a.SendMessageResponse{}, err
	}
	if in.skill == SkillAsk {
		t, view, err := s.askTask(ctx, c, req, in, true)
		if err != nil {
			return a2a.SendMessageResponse{}, err
		}
		w := t.Wire(view)
		return a2a.SendMessageResponse{Task: &w}, nil
	}
	return s.search(ctx, c, m, in)
}

// validateMessage checks the envelope of a user message.
func validateMessage(m *a2a.Message) error {
	if m.Role != a2a.RoleUser {
		if m.Role == "" {
			return a2a.BadParam("message.role", "is required and must be ROLE_USER")
		}
		return a2a.BadParam("message.role", "must be ROLE_USER, not %q", m.Role)
	}
	if m.MessageID == "" {
		return a2a.BadParam("message.messageId", "is required")
	}
	if len(m.Parts) == 0 {
		return a2a.BadParam("message.parts", "must hold at least one part")
	}
	if len(m.Parts) > MaxParts {
		return a2a.BadParam("message.parts", "%d parts, at most %d", len(m.Parts), MaxParts)
	}
	if len(m.Metadata) > 0 && !a2a.IsObject(m.Metadata) {
		return a2a.BadParam("message.metadata", "must be a JSON object")
	}
	for i, p := range m.Parts {
		n := 0
		if p.Text != nil {
			n++
		}
		if p.Raw != nil {
			n++
		}
		if p.URL != nil {
			n++
		}
		if p.Data != nil {
			n++
		}
		field := fmt.Sprintf("message.parts[%d]", i)
		if n != 1 {
			return a2a.BadParam(field, "must hold exactly one of text, raw, url, data (found %d)", n)
		}
		if len(p.Metadata) > 0 && !a2a.IsObject(p.Metadata) {
			return a2a.BadParam(field+".metadata", "must be a JSON object")
		}
	}
	return nil
}

// messageToTask answers a message that names a task. kfa tasks take no
// follow-up messages: details go on the public discussion.
func (s *Service) messageToTask(ctx context.Context, c Caller, taskID string) error {
	if c.Agent == nil {
		return taskNotFound(taskID)
	}
	t, err := s.deps.Tasks.Get(ctx, c.Agent.ID, taskID)
	if err != nil {
		return s.taskError(taskID, err)
	}
	if t.State.Terminal() {
		return a2a.Errorf(a2a.UnsupportedOperation,
			"task %s is %s; a terminal task accepts no messages (ask again in a new task, reusing its contextId)", t.ID, t.State).
			With("taskId", t.ID)
	}
	return a2a.Errorf(a2a.UnsupportedOperation,
		"task %s takes no follow-up messages; add details as a reply on its discussion: POST %s/api/v1/discussions/%s/replies",
		t.ID, s.cfg.PublicURL, t.DiscussionID).With("taskId", t.ID)
}

// msgInput is what a message asks for, read from its parts and metadata.
type msgInput struct {
	skill  string                     // the skill to run
	action string                     // search, research or ask
	data   map[string]json.RawMessage // the data part's object, nil when none
	text   string                     // the text parts, joined (minus one that only names the skill)
}

// actionSkill maps each action to its skill.
var actionSkill = map[string]string{"search": SkillSearch, "research": SkillSearch, "ask": SkillAsk}

// readInput picks the skill and its input, the way A2A services commonly
// do it: a data part's "skill" or "action", else metadata.skill (of the
// message, then of the request), else a text part that is exactly a skill
// id, else a search for the text.
func (s *Service) readInput(req *a2a.SendMessageRequest) (msgInput, error) {
	m := req.Message
	var (
		in        msgInput
		texts     []string
		textSkill string
	)
	for i, p := range m.Parts {
		field := fmt.Sprintf("message.parts[%d]", i)
		switch {
		case p.Text != nil:
			if t := strings.TrimSpace(*p.Text); textSkill == "" && isSkillID(t) {
				textSkill = t
				continue
			}
			texts = append(texts, *p.Text)
		case p.Data != nil:
			if p.MediaType != "" && !isJSONMedia(p.MediaType) {
				return msgInput{}, a2a.Errorf(a2a.ContentTypeNotSupported,
					"%s: media type %q is not supported; data parts must be application/json", field, p.MediaType)
			}
			if in.data != nil {
				continue // the first data part decides; later ones are ignored
			}
			if !a2a.IsObject(p.Data) {
				return msgInput{}, a2a.BadParam(field+".data", `must be a JSON object such as {"action":"search","query":"..."}`)
			}
			if err := json.Unmarshal(p.Data, &in.data); err != nil {
				return msgInput{}, a2a.BadParam(field+".data", "not a JSON object: %v", err)
			}
		default:
			return msgInput{}, a2a.Errorf(a2a.ContentTypeNotSupported,
				"%s: raw and url parts are not supported; send text or an application/json data part", field)
		}
	}
	in.text = strings.Join(texts, "\n")

	var dataSkill string
	if in.data != nil {
		var err error
		if in.action, err = str(in.data, "action"); err != nil {
			return msgInput{}, err
		}
		if dataSkill, err = str(in.data, "skill"); err != nil {
			return msgInput{}, err
		}
	}
	metaSkill, err := metadataSkill(m.Metadata, "message.metadata")
	if err != nil {
		return msgInput{}, err
	}
	if metaSkill == "" {
		if metaSkill, err = metadataSkill(req.Metadata, "metadata"); err != nil {
			return msgInput{}, err
		}
	}
	for _, cand := range []struct{ field, v string }{{"data.skill", dataSkill}, {"metadata.skill", metaSkill}, {"text", textSkill}} {
		if cand.v != "" {
			if err := s.checkSkill(cand.field, cand.v); err != nil {
				return msgInput{}, err
			}
			in.skill = cand.v
			break
		}
	}
	if in.action != "" {
		sk, ok := actionSkill[in.action]
		if !ok {
			return msgInput{}, a2a.BadParam("data.action", "unknown action %q; use search, research or ask", truncate(in.action, 64))
		}
		if in.skill != "" && in.skill != sk {
			return msgInput{}, a2a.BadParam("data.action", "action %q belongs to %s, not to the selected skill %s", in.action, sk, in.skill)
		}
		if err := s.checkSkill("data.action", sk); err != nil {
			return msgInput{}, err
		}
		in.skill = sk
	}
	switch {
	case in.skill == "":
		in.skill, in.action = SkillSearch, "search"
	case in.action == "" && in.skill == SkillAsk:
		in.action = "ask"
	case in.action == "":
		in.action = "search"
	}
	return in, nil
}

func isSkillID(s string) bool { return s == SkillSearch || s == SkillAsk }

// checkSkill refuses a skill this server does not run, listing those it does.
func (s *Service) checkSkill(field, id string) error {
	for _, sk := range s.skills {
		if sk.card.ID == id {
			return nil
		}
	}
	if id == SkillAsk {
		return a2a.Errorf(a2a.UnsupportedOperation,
			"asks are disabled on this server (contributor writes are off); only knowledge-search is available")
	}
	ids := make([]string, len(s.skills))
	for i, sk := range s.skills {
		ids[i] = sk.card.ID
	}
	e := a2a.BadParam(field, "unknown skill %q; available skills: %s", truncate(id, 64), strings.Join(ids, ", "))
	return e.With("availableSkills", strings.Join(ids, ","))
}

// metadataSkill reads metadata.skill (or skillId) of a metadata object.
func metadataSkill(meta json.RawMessage, field string) (string, error) {
	if len(meta) == 0 {
		return "", nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(meta, &m); err != nil {
		return "", a2a.BadParam(field, "must be a JSON object")
	}
	for _, k := range []string{"skill", "skillId"} {
		if raw, ok := m[k]; ok && !bytes.Equal(raw, []byte("null")) {
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return "", a2a.BadParam(field+"."+k, "must be a string")
			}
			return v, nil
		}
	}
	return "", nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func isJSONMedia(mt string) bool {
	t, _, err := mime.ParseMediaType(mt)
	return err == nil && (t == "application/json" || strings.HasSuffix(t, "+json"))
}

// str reads an optional string field of a data object.
func str(obj map[string]json.RawMessage, key string) (string, error) {
	raw, ok := obj[key]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", a2a.BadParam("data."+key, "must be a string")
	}
	return v, nil
}

// search runs knowledge-search and answers with a direct Message.
func (s *Service) search(ctx context.Context, c Caller, m *a2a.Message, in msgInput) (a2a.SendMessageResponse, error) {
	q := knowledge.Query{Text: in.text, Limit: knowledge.DefaultLimit, Research: in.action == "research"}
	if in.data != nil {
		query, err := str(in.data, "query")
		if err != nil {
			return a2a.SendMessageResponse{}, err
		}
		if query != "" {
			q.Text = query
		}
		if raw, ok := in.data["limit"]; ok && !bytes.Equal(raw, []byte("null")) {
			// A JSON number only: json.Number alone would also take "3".
			var v int64
			err := json.Unmarshal(raw, &v)
			if err != nil || v < 1 || v > knowledge.MaxLimit {
				return a2a.SendMessageResponse{}, a2a.BadParam("data.limit", "must be an integer from 1 to %d", knowledge.MaxLimit)
			}
			q.Limit = int(v)
		}
		for _, f := range []struct {
			key string
			dst *string
		}{{"kind", &q.Kind}, {"product", &q.Product}, {"environment", &q.Environment}} {
			v, err := str(in.data, f.key)
			if err != nil {
				return a2a.SendMessageResponse{}, err
			}
			if err := validateFilter(f.key, v); err != nil {
				return a2a.SendMessageResponse{}, err
			}
			*f.dst = v
		}
	}
	q.Text = strings.TrimSpace(q.Text)
	if err := validateQuery(q.Text); err != nil {
		return a2a.SendMessageResponse{}, err
	}
	if s.deps.SearchRate != nil {
		if wait, ok := s.deps.SearchRate.Allow(c.limitKey()); !ok {
			return a2a.SendMessageResponse{}, &a2a.Error{
				Kind:       a2a.RateLimited,
				Message:    fmt.Sprintf("too many searches: the limit is %s per client", s.deps.SearchRate),
				RetryAfter: wait,
			}
		}
	}
	if s.deps.Search == nil {
		return a2a.SendMessageResponse{}, a2a.Errorf(a2a.Unavailable, "the search index is not loaded yet; try again shortly")
	}
	res, err := s.deps.Search.Search(ctx, q)
	if err != nil {
		return a2a.SendMessageResponse{}, fmt.Errorf("search: %w", err)
	}
	msg, err := s.searchAnswer(m, q, res)
	if err != nil {
		return a2a.SendMessageResponse{}, err
	}
	s.noteEmptyBase(ctx, msg, res)
	return a2a.SendMessageResponse{Message: msg}, nil
}

func validateQuery(q string) error {
	if q == "" {
		return a2a.BadParam("data.query", "must not be empty")
	}
	if n := len([]rune(q)); n > knowledge.MaxQueryLen {
		return a2a.BadParam("data.query", "%d characters, at most %d", n, knowledge.MaxQueryLen)
	}
	return nil
}

func validateFilter(key, v string) error {
	if v == "" {
		return nil
	}
	f := discussions.Filters{}
	switch key {
	case "kind":
		f.Kind = v
	case "product":
		f.Product = v
	case "environment":
		f.Environment = v
	}
	if err := f.Validate(); err != nil {
		return toA2A(err, "data.")
	}
	return nil
}

// searchAnswer is the direct Message: a one-line summary and the hits.
func (s *Service) searchAnswer(m *a2a.Message, q knowledge.Query, res knowledge.Result) (*a2a.Message, error) {
	type result struct {
		Query       string                        `json:"query"`
		Results     []knowledge.Hit               `json:"results"`
		Discussions []knowledge.RelatedDiscussion `json:"discussions,omitempty"`
	}
	hits := res.Hits
	if hits == nil {
		hits = []knowledge.Hit{}
	}
	data, err := json.Marshal(result{Query: q.Text, Results: hits, Discussions: res.Discussions})
	if err != nil {
		return nil, err
	}
	var summary string
	switch len(hits) {
	case 0:
		summary = fmt.Sprintf("No knowledge records match %q.", q.Text)
		if s.cfg.ContributorWrites {
			summary += " Nothing found; to ask the community, use the ask-network skill."
		}
	case 1:
		summary = fmt.Sprintf("Found 1 record for %q: %s.", q.Text, hits[0].Title)
	default:
		titles := make([]string, len(hits))
		for i, h := range hits {
			titles[i] = h.Title
		}
		summary = fmt.Sprintf("Found %d records for %q: %s.", len(hits), q.Text, strings.Join(titles, "; "))
	}
	contextID := m.ContextID
	if contextID == "" {
		contextID = ulid.Make().String()
	}
	return &a2a.Message{
		MessageID: ulid.Make().String(),
		ContextID: contextID,
		Role:      a2a.RoleAgent,
		Parts:     []a2a.Part{a2a.TextPart(summary), a2a.DataPart(data)},
	}, nil
}

// askTask runs ask-network: the new (or retried) task and how to show it.
// needReturnImmediately is false over a stream, where the server holds the
// stream open instead of a request.
func (s *Service) askTask(ctx context.Context, c Caller, req *a2a.SendMessageRequest, in msgInput, needReturnImmediately bool) (tasks.Task, tasks.View, error) {
	ag, err := requireAgent(c, "ask-network")
	if err != nil {
		return tasks.Task{}, tasks.View{}, err
	}
	if !ag.Has(agents.ScopePost) {
		return tasks.Task{}, tasks.View{}, a2a.Errorf(a2a.PermissionDenied, "ask-network needs the post scope; this agent has %s",
			strings.Join(ag.ScopeStrings(), ","))
	}
	cfg := req.Configuration
	if needReturnImmediately && (cfg == nil || cfg.ReturnImmediately == nil || !*cfg.ReturnImmediately) {
		return tasks.Task{}, tasks.View{}, a2a.Errorf(a2a.UnsupportedOperation,
			"ask-network requires configuration.returnImmediately=true: a community reply can take days, so kfa "+
				"returns the WORKING task at once instead of holding the request open; poll GET /tasks/{id}, list tasks, "+
				"or hold a stream with message:stream")
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
	t, _, err := s.deps.Tasks.Ask(ctx, ai)
	if err != nil {
		return tasks.Task{}, tasks.View{}, s.askError(ai.JoinDiscussionID, err)
	}
	return t, view, nil
}

// askError explains a failed join in terms of the request's fields.
func (s *Service) askError(discussionID string, err error) error {
	switch {
	case isErr(err, discussions.ErrNotFound):
		return a2a.BadParam("data.discussionId", "no discussion %q", discussionID)
	case isErr(err, discussions.ErrAnswered):
		return a2a.Errorf(a2a.UnsupportedOperation,
			"discussion %s is already answered; read it at %s/api/v1/discussions/%s, or ask a new question",
			discussionID, s.cfg.PublicURL, discussionID).With("discussionId", discussionID)
	}
	return toA2A(err, "data.")
}
