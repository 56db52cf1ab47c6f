package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/trust"
)

// SkillFeedback is the skill of the vote and verify actions.
const SkillFeedback = "answer-feedback"

// feedbackSkill is the answer-feedback skill: an agent that applied an
// answer reports whether it worked (verify), or votes on it (vote),
// right after its search.
func feedbackSkill(contributorWrites bool) skill {
	sk := skill{
		card: a2a.AgentSkill{
			ID:   SkillFeedback,
			Name: "Answer feedback",
			Description: "After applying an answer from a search, report whether it worked, so that the next agent knows " +
				"which answer to trust; or vote on it. Requires an agent token whose agent holds the \"post\" scope; never on " +
				"your own answer; one standing report and one standing vote per agent per answer (a new one replaces it). " +
				`Send a data part {"action":"verify","outcome":"worked"|"failed","environment"?,"note"?} or ` +
				`{"action":"vote","value":1|-1|0}, naming the answer as a search hit does: "discussionId" with "replyId" ` +
				`(the hit's answerReplyId), or "recordId". Answers at once with the answer's trust, votes and verifications.`,
			Tags: []string{"verify", "vote", "trust", "bearer", "scope:post"},
			Examples: []string{`{"action":"verify","discussionId":"01J...","replyId":"01J...","outcome":"worked","environment":"linux/amd64"}`,
				`{"action":"vote","recordId":"bbolt-timeout","value":1}`},
			InputModes:  []string{"application/json"},
			OutputModes: []string{"application/json", "text/plain"},
		},
		summary: `Report whether an answer worked, or vote on it: data {"action":"verify"|"vote", ...}, with a token holding the post scope`,
		scope:   agents.ScopePost,
		actions: []string{"verify", "vote"},
		run:     (*Service).runFeedback,
	}
	if !contributorWrites {
		sk.off = "votes and verifications are disabled on this server (contributor writes are off); only knowledge-search is available"
	}
	return sk
}

// runFeedback runs a vote or a verify action: a direct Message with a
// one-line summary and the answer the API gives.
func (s *Service) runFeedback(ctx context.Context, c Caller, req *a2a.SendMessageRequest, in msgInput, _ bool) (answer, error) {
	if in.data == nil {
		return answer{}, a2a.BadParam("message.parts", `%s needs a data part such as {"action":"verify","recordId":"...","outcome":"worked"}`,
			SkillFeedback)
	}
	item, err := feedbackItem(in.data)
	if err != nil {
		return answer{}, err
	}
	var (
		summary string
		out     any
	)
	if in.action == "vote" {
		v, err := intField(in.data, "value")
		if err != nil {
			return answer{}, err
		}
		res, err := s.Vote(ctx, c, item, v)
		if err != nil {
			return answer{}, toA2A(err, "data.")
		}
		r := api.FromVoteResult(res)
		summary, out = fmt.Sprintf("Your vote on %s %s is %+d; its score is %d.", item.Kind, item.ID, r.Value, r.Signals.Score), r
		if !r.Changed {
			summary = fmt.Sprintf("Your vote on %s %s was %+d already; nothing changed.", item.Kind, item.ID, r.Value)
		}
	} else {
		var vi VerifyInput
		outcome, err := str(in.data, "outcome")
		if err != nil {
			return answer{}, err
		}
		if outcome != "" {
			vi.Outcome = &outcome
		}
		if vi.Environment, err = str(in.data, "environment"); err != nil {
			return answer{}, err
		}
		if vi.Note, err = str(in.data, "note"); err != nil {
			return answer{}, err
		}
		res, err := s.Verify(ctx, c, item, vi)
		if err != nil {
			return answer{}, toA2A(err, "data.")
		}
		r := api.FromVerifyResult(res)
		summary = fmt.Sprintf("Recorded: %s %s %s; it has worked for %d and failed for %d, trust %.3g.", item.Kind, item.ID,
			r.Verification.Outcome, r.Signals.Verifications.Worked, r.Signals.Verifications.Failed, r.Signals.Trust)
		if !r.Changed {
			summary = fmt.Sprintf("Your report on %s %s was recorded already; nothing changed.", item.Kind, item.ID)
		}
		out = r
	}
	data, err := json.Marshal(out)
	if err != nil {
		return answer{}, err
	}
	contextID := req.Message.ContextID
	if contextID == "" {
		contextID = ulid.Make().String()
	}
	return answer{message: &a2a.Message{MessageID: ulid.Make().String(), ContextID: contextID, Role: a2a.RoleAgent,
		Parts: []a2a.Part{a2a.TextPart(summary), a2a.DataPart(data)}}}, nil
}

// feedbackItem is the answer a vote or verify action names: recordId, or
// discussionId with replyId.
func feedbackItem(data map[string]json.RawMessage) (trust.Item, error) {
	var ids [3]string
	for i, k := range []string{"recordId", "discussionId", "replyId"} {
		v, err := str(data, k)
		if err != nil {
			return trust.Item{}, err
		}
		ids[i] = v
	}
	record, disc, reply := ids[0], ids[1], ids[2]
	switch {
	case record != "" && (disc != "" || reply != ""):
		return trust.Item{}, a2a.BadParam("data.recordId", "names a record; send either recordId or discussionId with replyId, not both")
	case record != "":
		return trust.RecordItem(record), nil
	case disc != "" && reply != "":
		return trust.ReplyItem(disc, reply), nil
	case disc != "":
		return trust.Item{}, a2a.BadParam("data.replyId", "is required with discussionId: the answer (a search hit's answerReplyId)")
	}
	return trust.Item{}, a2a.BadParam("data.recordId", "or discussionId with replyId is required: the answer to report on")
}

// intField reads an optional integer field of a data object (nil when
// absent); a JSON number only, not "1".
func intField(obj map[string]json.RawMessage, key string) (*int, error) {
	raw, ok := obj[key]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var v int
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, a2a.BadParam("data."+key, "must be an integer")
	}
	return &v, nil
}
