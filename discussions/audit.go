package discussions

import (
	"fmt"
	"time"

	"github.com/kfa-project/kfa/a2a"
)

// The audit of stored discussions (kfa check), as the decisions make
// them: a store's checker walks its replies and asks these, so that the
// checker and the writer never disagree on a rule.

// KnownStatus reports whether s is a status a discussion takes.
func KnownStatus(s Status) bool { return s == StatusOpen || s == StatusAnswered }

// AnswerCheck checks a discussion's status and answer time against its
// replies: answered at its earliest visible qualifying reply, open
// without one, as Answered makes it (DecidePost, HideReply, ShowReply). Add each stored reply (in any order), then ask
// Problem.
type AnswerCheck struct{ first time.Time }

// Add takes r, a stored reply of d, into account.
func (a *AnswerCheck) Add(d Discussion, r Reply) {
	if !r.Hidden && Qualifies(d, r) && (a.first.IsZero() || r.CreatedAt.Before(a.first)) {
		a.first = r.CreatedAt
	}
}

// Problem says what is wrong with d's status given the replies added ("":
// nothing).
func (a *AnswerCheck) Problem(d Discussion) string {
	switch {
	case d.Status == StatusOpen && !a.first.IsZero():
		return "open, but has a visible qualifying reply (by someone other than the author)"
	case d.Status == StatusAnswered && a.first.IsZero():
		return "answered, but has no visible qualifying reply"
	case d.Status == StatusAnswered && !d.AnsweredAt.Equal(a.first):
		return fmt.Sprintf("answeredAt is %s, the earliest visible qualifying reply is from %s",
			a2a.FormatTime(d.AnsweredAt), a2a.FormatTime(a.first))
	}
	return ""
}

// NotifiesAuthor reports whether reply r on d leaves d's author an inbox
// entry (Notices): every reply but the author's own does.
func NotifiesAuthor(d Discussion, r Reply) bool { return r.AuthorID != d.AuthorID }
