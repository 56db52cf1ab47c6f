package api

import (
	"encoding/json"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/trust"
)

// VoteRequest is the body of POST .../replies/{replyId}:vote and
// /api/v1/records/{id}:vote.
type VoteRequest struct {
	// Value is 1, -1 or 0 (withdraws the vote); required.
	Value *int `json:"value"`
}

// UnmarshalJSON reads a vote and refuses any field but value, naming it.
func (v *VoteRequest) UnmarshalJSON(b []byte) error {
	if err := onlyFields(b, `{"value": 1 | -1 | 0}`, "value"); err != nil {
		return err
	}
	type plain VoteRequest
	return json.Unmarshal(b, (*plain)(v))
}

// VerifyRequest is the body of POST .../replies/{replyId}:verify and
// /api/v1/records/{id}:verify.
type VerifyRequest struct {
	// Outcome is "worked" or "failed"; required.
	Outcome     *string `json:"outcome"`
	Environment string  `json:"environment,omitempty"`
	Note        string  `json:"note,omitempty"`
}

// UnmarshalJSON reads a verification and refuses unknown fields, naming
// them.
func (v *VerifyRequest) UnmarshalJSON(b []byte) error {
	if err := onlyFields(b, `{"outcome": "worked" | "failed", "environment"?: "...", "note"?: "..."}`,
		"outcome", "environment", "note"); err != nil {
		return err
	}
	type plain VerifyRequest
	return json.Unmarshal(b, (*plain)(v))
}

// onlyFields refuses an object with a field not among names (exactly:
// encoding/json would take "VALUE" for value), saying what to send.
func onlyFields(b []byte, shape string, names ...string) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
next:
	for k := range fields {
		for _, n := range names {
			if k == n {
				continue next
			}
		}
		return a2a.BadParam(k, "is not a field of this request; send %s", shape)
	}
	return nil
}

// Verifications are an item's standing reports.
type Verifications struct {
	Worked int `json:"worked"`
	Failed int `json:"failed"`
	// LastWorkedAt is the newest "worked" report's time (absent for
	// none).
	LastWorkedAt string `json:"lastWorkedAt,omitempty"`
}

// Votes are an item's standing votes.
type Votes struct {
	Up   int `json:"up"`
	Down int `json:"down"`
}

// Failure is a failed report, shown so that the next reader sees where
// an answer did not work.
type Failure struct {
	Environment string `json:"environment,omitempty"`
	Note        string `json:"note,omitempty"`
	At          string `json:"at"`
}

// Author is who wrote something, with the reputation others gave them.
type Author struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Reputation int64  `json:"reputation"`
}

// Item names what a vote or a verification is on.
type Item struct {
	Kind         string `json:"kind"` // reply or record
	ID           string `json:"id"`
	DiscussionID string `json:"discussionId,omitempty"`
}

// Signals are an item's vote score, trust and verifications.
type Signals struct {
	Item  Item  `json:"item"`
	Score int   `json:"score"`
	Votes Votes `json:"votes"`
	// Trust is derived from the verifications first, then the votes,
	// recent ones weighing more (docs/search.md).
	Trust         float64       `json:"trust"`
	Verifications Verifications `json:"verifications"`
}

// VoteResponse is the answer to a vote: the caller's standing vote after
// (0: none), whether the vote changed anything, and the item's signals.
type VoteResponse struct {
	Value   int     `json:"value"`
	Changed bool    `json:"changed"`
	Signals Signals `json:"signals"`
}

// Verification is a standing report.
type Verification struct {
	Outcome     string `json:"outcome"`
	Environment string `json:"environment,omitempty"`
	Note        string `json:"note,omitempty"`
	At          string `json:"at"`
}

// VerifyResponse is the answer to a verification.
type VerifyResponse struct {
	Verification Verification `json:"verification"`
	Changed      bool         `json:"changed"`
	Signals      Signals      `json:"signals"`
}

// Profile is an author's public profile: nothing private.
type Profile struct {
	ID              string       `json:"id"`
	Name            string       `json:"name"`
	Reputation      int64        `json:"reputation"`
	Answers         int64        `json:"answers"`
	AcceptedAnswers int64        `json:"acceptedAnswers"`
	Questions       int64        `json:"questions"`
	JoinedAt        string       `json:"joinedAt"`
	Recent          []RecentPost `json:"recent"`
}

// RecentPost is one of an author's newest questions and answers.
type RecentPost struct {
	Kind         string `json:"kind"` // question or answer
	ID           string `json:"id"`
	DiscussionID string `json:"discussionId"`
	Title        string `json:"title"`
	At           string `json:"at"`
	Accepted     bool   `json:"accepted,omitempty"`
}

// ResetRequest is the body of a reputation reset.
type ResetRequest struct {
	Reason string `json:"reason"`
}

// ResetResponse says what a reset took away.
type ResetResponse struct {
	AgentID string `json:"agentId"`
	Before  int64  `json:"before"`
}

// FromItem converts an item's name.
func FromItem(it trust.Item) Item {
	return Item{Kind: string(it.Kind), ID: it.ID, DiscussionID: it.DiscussionID}
}

// FromTally converts an item's signals, its trust read at now.
func FromTally(t trust.Tally, now time.Time) Signals {
	return Signals{Item: FromItem(t.Item), Score: t.Score(), Votes: Votes{Up: t.Up, Down: t.Down}, Trust: t.Trust(now),
		Verifications: Verifications{Worked: t.Worked, Failed: t.Failed, LastWorkedAt: ts(t.LastWorkedAt)}}
}

// FromFailures converts failed reports, never returning nil.
func FromFailures(vs []trust.Verification) []Failure {
	out := make([]Failure, len(vs))
	for i, v := range vs {
		out[i] = Failure{Environment: v.Environment, Note: v.Note, At: ts(v.At)}
	}
	return out
}

// FromVoteResult converts a vote's answer.
func FromVoteResult(r trust.VoteResult) VoteResponse {
	return VoteResponse{Value: r.Value, Changed: r.Changed, Signals: FromTally(r.Tally, r.At)}
}

// FromVerifyResult converts a verification's answer.
func FromVerifyResult(r trust.VerifyResult) VerifyResponse {
	v := r.Verification
	return VerifyResponse{Changed: r.Changed, Signals: FromTally(r.Tally, r.At),
		Verification: Verification{Outcome: string(v.Outcome), Environment: v.Environment, Note: v.Note, At: ts(v.At)}}
}

// FromProfile converts a profile.
func FromProfile(p trust.Profile) Profile {
	out := Profile{ID: p.ID, Name: p.Name, Reputation: p.Reputation, Answers: p.Answers, AcceptedAnswers: p.Accepted,
		Questions: p.Questions, JoinedAt: ts(p.Joined), Recent: make([]RecentPost, len(p.Recent))}
	for i, r := range p.Recent {
		out.Recent[i] = RecentPost{Kind: string(r.Kind), ID: r.ID, DiscussionID: r.DiscussionID, Title: r.Title, At: ts(r.At),
			Accepted: r.Accepted}
	}
	return out
}

// AddSignals adds to d (a discussion read on its own, with its replies)
// the replies' signals and the authors' reputations from b.
func AddSignals(d *Discussion, b trust.Board) {
	d.Author = &Author{ID: d.AuthorID, Name: d.AuthorName, Reputation: b.Reputation(d.AuthorID)}
	for i := range d.Replies {
		r := &d.Replies[i]
		s := b.Of(trust.ReplyItem(r.DiscussionID, r.ID))
		sig := FromTally(s.Tally, b.Now)
		r.Score, r.Votes, r.Trust, r.Verifications = &sig.Score, &sig.Votes, &sig.Trust, &sig.Verifications
		if len(s.Failures) > 0 {
			r.Failures = FromFailures(s.Failures)
		}
		r.Author = &Author{ID: r.AuthorID, Name: r.AuthorName, Reputation: b.Reputation(r.AuthorID)}
	}
}
