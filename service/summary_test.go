package service

import (
	"strings"
	"testing"

	"github.com/kfa-project/kfa/knowledge"
)

func TestSummary(t *testing.T) {
	rec := func(title string) knowledge.Hit {
		return knowledge.Hit{Source: knowledge.SourceRecord, ID: "r", Title: title}
	}
	disc := func(status, title string) knowledge.Hit {
		return knowledge.Hit{Source: knowledge.SourceDiscussion, ID: "01JD00000000000000000000AA", Title: title,
			Status: status, PageURL: "http://kfa.test/discussions/01JD00000000000000000000AA"}
	}
	tests := []struct {
		name    string
		writes  bool
		res     knowledge.Result
		want    []string
		wantNot []string
	}{
		{name: "a miss suggests asking", writes: true, res: knowledge.Result{},
			want: []string{`No knowledge records or answered discussions match "q".`, "use the ask-network skill"}},
		{name: "a miss without asks", res: knowledge.Result{},
			want: []string{`No knowledge records or answered discussions match "q".`}, wantNot: []string{"ask-network"}},
		{name: "one record", res: knowledge.Result{Hits: []knowledge.Hit{rec("A")}},
			want: []string{`Found 1 record for "q": A.`}},
		{name: "records and an answered discussion, counted apart",
			res:  knowledge.Result{Hits: []knowledge.Hit{disc("answered", "How?"), rec("A"), rec("B")}},
			want: []string{`Found 2 records and 1 answered discussion for "q": How?; A; B.`}},
		{name: "two answered discussions", res: knowledge.Result{Hits: []knowledge.Hit{disc("answered", "X"), disc("answered", "Y")}},
			want: []string{`Found 2 answered discussions for "q": X; Y.`}},
		{name: "only an open discussion: join it", writes: true, res: knowledge.Result{Hits: []knowledge.Hit{disc("open", "Same question?")}},
			want: []string{`No answer yet for "q".`, "An open discussion asks this: join it with discussionId 01JD00000000000000000000AA",
				`"discussionId":"01JD00000000000000000000AA"`, "rather than asking again"}},
		{name: "an open discussion beside a record", writes: true,
			res:  knowledge.Result{Hits: []knowledge.Hit{rec("A"), disc("open", "Same?")}},
			want: []string{`Found 1 record for "q": A.`, "join it with discussionId"}, wantNot: []string{"Same?;"}},
		{name: "an open discussion without asks points at its page", res: knowledge.Result{Hits: []knowledge.Hit{disc("open", "Same?")}},
			want: []string{"with no answer yet: http://kfa.test/discussions/01JD00000000000000000000AA"}, wantNot: []string{"discussionId"}},
		{name: "a correction is said", res: knowledge.Result{Hits: []knowledge.Hit{rec("A")},
			Corrections: []knowledge.Correction{{From: "tiemout", To: "timeout"}}},
			want: []string{`Nothing matched "tiemout" as typed; searched "timeout".`}},
		{name: "titles stay on one line", res: knowledge.Result{Hits: []knowledge.Hit{rec("two\nlines")}},
			want: []string{"two lines."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Service{cfg: Config{ContributorWrites: tt.writes}}
			got := s.summary("q", tt.res)
			if strings.Contains(got, "\n") {
				t.Errorf("summary %q is more than one line", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("summary %q lacks %q", got, w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("summary %q holds %q", got, w)
				}
			}
		})
	}
}
