package knowledge

import (
	"encoding/json"
	"math"
	"time"
)

// hitJSON is a Hit on the wire: the fields every result has, then a
// record's or a discussion's own. Times are in kfa's timestamp form (UTC,
// milliseconds, "Z") and the score is rounded to four decimals: clients
// compare timestamps as strings, and more digits of a score mean nothing.
type hitJSON struct {
	Source      Source  `json:"source"`
	ID          string  `json:"id"`
	Title       string  `json:"title"`
	Kind        string  `json:"kind,omitempty"`
	Product     string  `json:"product,omitempty"`
	Environment string  `json:"environment,omitempty"`
	Score       float64 `json:"score"`
	Snippet     string  `json:"snippet"`
	PageURL     string  `json:"pageUrl"`
	URL         string  `json:"url,omitempty"`
	UpdatedAt   string  `json:"updatedAt,omitempty"`
	Status      string  `json:"status,omitempty"`
	ReplyCount  *int    `json:"replyCount,omitempty"`
	CreatedAt   string  `json:"createdAt,omitempty"`
	AnsweredAt  string  `json:"answeredAt,omitempty"`
	Accepted    string  `json:"acceptedReplyId,omitempty"`
	Answer      string  `json:"answerReplyId,omitempty"`
	Body        string  `json:"body,omitempty"`
	Replies     []reply `json:"replies,omitempty"`
	Origin      *Origin `json:"origin,omitempty"`
	signalsJSON
	Author *Author `json:"author,omitempty"`
}

// signalsJSON is Signals on the wire: votes (a hit's score is its
// relevance), trust (three decimals) and the verifications.
type signalsJSON struct {
	Votes         int               `json:"votes"`
	Trust         float64           `json:"trust"`
	Verifications verificationsJSON `json:"verifications"`
}

type verificationsJSON struct {
	Worked       int    `json:"worked"`
	Failed       int    `json:"failed"`
	LastWorkedAt string `json:"lastWorkedAt,omitempty"`
}

func signalsOf(s Signals) signalsJSON {
	return signalsJSON{Votes: s.Votes, Trust: math.Round(s.Trust*1e3) / 1e3, Verifications: verificationsJSON{
		Worked: s.Verifications.Worked, Failed: s.Verifications.Failed, LastWorkedAt: formatOpt(s.Verifications.LastWorkedAt)}}
}

type reply struct {
	ID         string  `json:"id"`
	AuthorName string  `json:"authorName"`
	Body       string  `json:"body"`
	Accepted   bool    `json:"accepted,omitempty"`
	CreatedAt  string  `json:"createdAt"`
	Author     *Author `json:"author,omitempty"`
	signalsJSON
}

// MarshalJSON writes the hit as search answers show it.
func (h Hit) MarshalJSON() ([]byte, error) {
	out := hitJSON{
		Source: h.Source, ID: h.ID, Title: h.Title, Kind: h.Kind, Product: h.Product, Environment: h.Environment,
		Score: math.Round(h.Score*1e4) / 1e4, Snippet: h.Snippet, PageURL: h.PageURL, URL: h.URL, Body: h.Body,
		Origin: h.Origin, signalsJSON: signalsOf(h.Signals), Author: h.Author,
	}
	if h.Source == SourceDiscussion {
		n := h.ReplyCount
		out.Status, out.ReplyCount = h.Status, &n
		out.CreatedAt, out.AnsweredAt = formatOpt(h.CreatedAt), formatOpt(h.AnsweredAt)
		out.Accepted, out.Answer = h.AcceptedReplyID, h.AnswerReplyID
		for _, r := range h.Replies {
			out.Replies = append(out.Replies, reply{ID: r.ID, AuthorName: r.AuthorName, Body: r.Body, Accepted: r.Accepted,
				CreatedAt: FormatTime(r.CreatedAt), Author: r.Author, signalsJSON: signalsOf(r.Signals)})
		}
	} else {
		out.UpdatedAt = FormatTime(h.UpdatedAt)
	}
	return json.Marshal(out)
}

func formatOpt(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return FormatTime(t)
}
