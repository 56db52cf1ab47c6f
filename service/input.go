package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strings"

	"github.com/kfa-project/kfa/a2a"
)

// MaxParts bounds the parts of one message.
const MaxParts = 16

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
		if n != 1 {
			return a2a.BadParam(partField(i), "must hold exactly one of text, raw, url, data (found %d)", n)
		}
		if len(p.Metadata) > 0 && !a2a.IsObject(p.Metadata) {
			return a2a.BadParam(partField(i)+".metadata", "must be a JSON object")
		}
	}
	return nil
}

// partField names part i of the message, for an error.
func partField(i int) string { return fmt.Sprintf("message.parts[%d]", i) }

// msgInput is what a message asks for, read from its parts and metadata.
type msgInput struct {
	skill  string                     // the skill to run
	action string                     // search, research or ask
	data   map[string]json.RawMessage // the data part's object, nil when none
	text   string                     // the text parts, joined (minus one that only names the skill)
}

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
		switch {
		case p.Text != nil:
			if t := strings.TrimSpace(*p.Text); textSkill == "" && s.skills.byID[t] != nil {
				textSkill = t
				continue
			}
			texts = append(texts, *p.Text)
		case p.Data != nil:
			if p.MediaType != "" && !isJSONMedia(p.MediaType) {
				return msgInput{}, a2a.Errorf(a2a.ContentTypeNotSupported,
					"%s: media type %q is not supported; data parts must be application/json", partField(i), p.MediaType)
			}
			if in.data != nil {
				continue // the first data part decides; later ones are ignored
			}
			if !a2a.IsObject(p.Data) {
				return msgInput{}, a2a.BadParam(partField(i)+".data", `must be a JSON object such as {"action":"search","query":"..."}`)
			}
			// The body's decoding checked these bytes already (a2a.Decode):
			// one pass decodes them, without encoding/json's scan ahead.
			if err := a2a.Decode(p.Data, &in.data); err != nil {
				return msgInput{}, a2a.BadParam(partField(i)+".data", "not a JSON object: %v", err)
			}
			if err := checkDataKeys(in.data); err != nil {
				return msgInput{}, err
			}
		default:
			return msgInput{}, a2a.Errorf(a2a.ContentTypeNotSupported,
				"%s: raw and url parts are not supported; send text or an application/json data part", partField(i))
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
		sk, ok := s.skills.byAction[in.action]
		if !ok {
			return msgInput{}, a2a.BadParam("data.action", "unknown action %q; use %s", truncate(in.action, 64), s.actionList())
		}
		if in.skill != "" && in.skill != sk.card.ID {
			return msgInput{}, a2a.BadParam("data.action", "action %q belongs to %s, not to the selected skill %s", in.action, sk.card.ID, in.skill)
		}
		if err := s.checkSkill("data.action", sk.card.ID); err != nil {
			return msgInput{}, err
		}
		in.skill = sk.card.ID
	}
	if in.skill == "" && in.data != nil && in.data["query"] == nil && strings.TrimSpace(in.text) == "" {
		return msgInput{}, s.undetermined()
	}
	if in.skill == "" {
		in.skill = s.skills.all[0].card.ID // the first skill is the default: knowledge-search
	}
	if in.action == "" {
		in.action = s.skills.byID[in.skill].actions[0]
	}
	return in, nil
}

// actionList names every action, for an error message.
func (s *Service) actionList() string {
	var names []string
	for _, sk := range s.skills.all {
		names = append(names, sk.actions...)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// checkSkill refuses a skill this server does not run, saying why, or one
// it does not know, listing those it runs.
func (s *Service) checkSkill(field, id string) error {
	if sk := s.skills.byID[id]; sk != nil {
		if sk.off != "" {
			return a2a.Errorf(a2a.UnsupportedOperation, "%s", sk.off)
		}
		return nil
	}
	return s.withSkills(a2a.BadParam(field, "unknown skill %q; %s", truncate(id, 64), s.skillList()))
}

// undetermined refuses a message from which no skill can be told: a data
// part with neither action, skill nor query, and no text or metadata that
// names one.
func (s *Service) undetermined() error {
	return s.withSkills(a2a.BadParam("message.parts",
		`cannot tell which skill this message is for: send a data part with "action" (%s) or "skill", `+
			"set metadata.skill, or send the query as text; %s", s.actionList(), s.skillList()))
}

// skillList names the skills this server runs with their one-line
// summaries, for an error message.
func (s *Service) skillList() string {
	var lines []string
	for _, sk := range s.skills.enabled() {
		lines = append(lines, sk.card.ID+" - "+sk.summary)
	}
	return "available skills: " + strings.Join(lines, "; ")
}

// withSkills adds the skills this server runs to e's ErrorInfo metadata,
// the same on every binding: availableSkills (the ids, comma-separated)
// and skill.<id> (its one-line summary).
func (s *Service) withSkills(e *a2a.Error) *a2a.Error {
	var ids []string
	for _, sk := range s.skills.enabled() {
		ids = append(ids, sk.card.ID)
		e = e.With("skill."+sk.card.ID, sk.summary)
	}
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

// dataKeys are the keys a data part's object is read by, exactly.
var dataKeys = []string{"action", "skill", "query", "limit", "kind", "product", "environment",
	"question", "details", "discussionId", "replyId", "recordId", "value", "outcome", "note",
	"forward", "minScore", "minTrust", "minReputation"}

// checkDataKeys refuses a data key that names one kfa reads other than
// exactly ("QUERY", "discussionid"): it would be ignored, and the request
// would not do what its sender meant.
func checkDataKeys(data map[string]json.RawMessage) error {
	for k := range data {
		for _, known := range dataKeys {
			if k != known && strings.EqualFold(k, known) {
				return a2a.BadParam("data."+k, "is not a field name: field names are matched exactly, and this one differs from %q only in case", known)
			}
		}
	}
	return nil
}

// str reads an optional string field of a data object.
func str(obj map[string]json.RawMessage, key string) (string, error) {
	raw, ok := obj[key]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var v string
	if err := a2a.Decode(raw, &v); err != nil {
		return "", a2a.BadParam("data."+key, "must be a string")
	}
	return v, nil
}
