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
	Body        string  `json:"body,omitempty"`
	Replies     []reply `json:"replies,omitempty"`
	Origin      *Origin `json:"origin,omitempty"`
}

type reply struct {
	HitReply
	CreatedAt string `json:"createdAt"`
}

// MarshalJSON writes the hit as search answers show it.
func (h Hit) MarshalJSON() ([]byte, error) {
	out := hitJSON{
		Source: h.Source, ID: h.ID, Title: h.Title, Kind: h.Kind, Product: h.Product, Environment: h.Environment,
		Score: math.Round(h.Score*1e4) / 1e4, Snippet: h.Snippet, PageURL: h.PageURL, URL: h.URL, Body: h.Body,
		Origin: h.Origin,
	}
	if h.Source == SourceDiscussion {
		n := h.ReplyCount
		out.Status, out.ReplyCount = h.Status, &n
		out.CreatedAt, out.AnsweredAt = formatOpt(h.CreatedAt), formatOpt(h.AnsweredAt)
		out.Accepted = h.AcceptedReplyID
		for _, r := range h.Replies {
			out.Replies = append(out.Replies, reply{HitReply: r, CreatedAt: FormatTime(r.CreatedAt)})
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
