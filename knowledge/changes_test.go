package knowledge_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/knowledge"
)

func TestChangesPages(t *testing.T) {
	ctx := context.Background()
	svc, _ := setup(t)
	var ls []string
	for i := range 12 {
		ls = append(ls, line(fmt.Sprintf("rec-%02d", i), fmt.Sprintf("Record %d", i)))
	}
	if _, err := svc.Import(ctx, strings.NewReader(lines(ls...)), knowledge.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, "rec-03"); err != nil {
		t.Fatal(err)
	}
	// 12 upserts then one delete: sequences 1..13.
	tests := []struct {
		name     string
		after    uint64
		limit    int
		wantIDs  []string
		wantNext uint64
		wantMore bool
		wantErr  error
		field    string // of an input error
	}{
		{name: "first page", after: 0, limit: 5, wantIDs: []string{"rec-00", "rec-01", "rec-02", "rec-03", "rec-04"}, wantNext: 5, wantMore: true},
		{name: "middle", after: 5, limit: 5, wantIDs: []string{"rec-05", "rec-06", "rec-07", "rec-08", "rec-09"}, wantNext: 10, wantMore: true},
		{name: "last page is exactly full", after: 10, limit: 3, wantIDs: []string{"rec-10", "rec-11", "rec-03"}, wantNext: 13},
		{name: "at the end", after: 13, limit: 3, wantNext: 13},
		{name: "default limit", after: 0, wantNext: 13, wantIDs: []string{"rec-00", "rec-01", "rec-02", "rec-03", "rec-04",
			"rec-05", "rec-06", "rec-07", "rec-08", "rec-09", "rec-10", "rec-11", "rec-03"}},
		{name: "past the end", after: 14, limit: 3, wantErr: knowledge.ErrCursorAhead},
		{name: "limit too large", limit: knowledge.MaxChangesLimit + 1, field: "limit"},
		{name: "negative limit", limit: -1, field: "limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := svc.Changes(ctx, tc.after, tc.limit)
			if tc.field != "" {
				var ie *input.Error
				if !errors.As(err, &ie) || ie.Field != tc.field {
					t.Fatalf("err = %v, want an input error on %s", err, tc.field)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				return
			}
			var ids []string
			for _, c := range p.Changes {
				ids = append(ids, c.ID)
			}
			if strings.Join(ids, ",") != strings.Join(tc.wantIDs, ",") || p.Next != tc.wantNext || p.HasMore != tc.wantMore {
				t.Errorf("got %v next=%d more=%v, want %v next=%d more=%v", ids, p.Next, p.HasMore, tc.wantIDs, tc.wantNext, tc.wantMore)
			}
		})
	}
	last, err := svc.Changes(ctx, 12, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c := last.Changes[0]; c.Op != knowledge.OpDelete || c.Record != nil {
		t.Errorf("the last change is %+v, want the delete of rec-03", c)
	}
}

// trimmedFeed is a feed whose oldest entries are gone, as a feed with
// retention has; no store trims its feed yet.
type trimmedFeed struct {
	knowledge.Store
	first, last uint64
}

func (f trimmedFeed) Feed(context.Context) (knowledge.FeedState, error) {
	return knowledge.FeedState{First: f.first, Last: f.last}, nil
}

func (f trimmedFeed) Changes(_ context.Context, after uint64, limit int) ([]knowledge.Change, error) {
	var out []knowledge.Change
	for seq := max(after+1, f.first); seq <= f.last && len(out) < limit && f.first > 0; seq++ {
		out = append(out, knowledge.Change{Seq: seq, ID: fmt.Sprintf("r%d", seq), Op: knowledge.OpUpsert})
	}
	return out, nil
}

func TestChangesCursorTooOld(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		feed    trimmedFeed
		after   uint64
		wantErr error
	}{
		{name: "entries right after the position are gone", feed: trimmedFeed{first: 10, last: 20}, after: 5, wantErr: knowledge.ErrCursorTooOld},
		{name: "the position is just before the oldest entry", feed: trimmedFeed{first: 10, last: 20}, after: 9},
		{name: "everything is gone", feed: trimmedFeed{first: 0, last: 20}, after: 5, wantErr: knowledge.ErrCursorTooOld},
		{name: "at the end of an emptied feed", feed: trimmedFeed{first: 0, last: 20}, after: 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := knowledge.NewService(tc.feed, nil).Changes(ctx, tc.after, 3)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
}
