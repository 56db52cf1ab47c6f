package discussions

import (
	"testing"
	"time"
)

func TestAnswerCheck(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	d := Discussion{ID: "d", AuthorID: "asker"}
	own := Reply{AuthorID: "asker", CreatedAt: t0}
	early := Reply{AuthorID: "bob", CreatedAt: t0.Add(time.Second)}
	late := Reply{AuthorID: "carol", CreatedAt: t0.Add(time.Minute)}
	for _, tc := range []struct {
		name    string
		status  Status
		at      time.Time
		replies []Reply
		ok      bool
	}{
		{"open, no reply", StatusOpen, time.Time{}, nil, true},
		{"open, the asker's own reply", StatusOpen, time.Time{}, []Reply{own}, true},
		{"open, a qualifying reply", StatusOpen, time.Time{}, []Reply{own, late}, false},
		{"answered at the first, in any order", StatusAnswered, early.CreatedAt, []Reply{late, own, early}, true},
		{"answered at a later one", StatusAnswered, late.CreatedAt, []Reply{late, early}, false},
		{"answered without one", StatusAnswered, t0, []Reply{own}, false},
	} {
		var a AnswerCheck
		dd := d
		dd.Status, dd.AnsweredAt = tc.status, tc.at
		for _, r := range tc.replies {
			a.Add(dd, r)
		}
		if p := a.Problem(dd); (p == "") != tc.ok {
			t.Errorf("%s: Problem = %q", tc.name, p)
		}
	}
	if KnownStatus("closed") || !KnownStatus(StatusOpen) || !KnownStatus(StatusAnswered) {
		t.Error("KnownStatus")
	}
	if NotifiesAuthor(d, own) || !NotifiesAuthor(d, early) {
		t.Error("the author is told of every reply but its own")
	}
}
