package knowledge_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/changelog"
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
			p, err := svc.Changes(ctx, knowledge.Position{At: changelog.Position{Seq: tc.after}}, tc.limit)
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
			if strings.Join(ids, ",") != strings.Join(tc.wantIDs, ",") || p.Next.At.Seq != tc.wantNext || p.HasMore != tc.wantMore {
				t.Errorf("got %v next=%d more=%v, want %v next=%d more=%v", ids, p.Next.At.Seq, p.HasMore, tc.wantIDs, tc.wantNext, tc.wantMore)
			}
		})
	}
	last, err := svc.Changes(ctx, knowledge.Position{At: changelog.Position{Seq: 12}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c := last.Changes[0]; c.Op != knowledge.OpDelete || c.Record != nil {
		t.Errorf("the last change is %+v, want the delete of rec-03", c)
	}
}

// TestChangesCursorTooOld: a position before the trimmed sequence is too
// old; the beginning never is.
func TestChangesCursorTooOld(t *testing.T) {
	ctx := context.Background()
	svc, db, clock := retentionSetup(t)
	// a, b, c written 40 days ago; a updated and b deleted then; d added
	// and c updated now.
	clock.set(day0)
	mustImport(t, svc, line("a", "A"), line("b", "B"), line("c", "C")) // 1, 2, 3
	mustImport(t, svc, line("a", "A2"))                                // 4
	if err := svc.Delete(ctx, "b"); err != nil {                       // 5
		t.Fatal(err)
	}
	clock.set(day0.Add(40 * 24 * time.Hour))
	mustImport(t, svc, line("d", "D"), line("c", "C2")) // 6, 7
	n, err := changelog.NewTrimmer(db, changelog.TrimmerOptions{Retention: 30 * 24 * time.Hour, Now: clock.now}).Trim(ctx)
	if err != nil || n != 4 {
		t.Fatalf("trimmed %d, %v; want 4 (a's and c's first versions, b's upsert and delete)", n, err)
	}
	fs, err := db.Feed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pos := func(seq, trimmed uint64) knowledge.Position {
		return knowledge.Position{At: changelog.Position{Seq: seq}, Trimmed: changelog.Position{Seq: trimmed}, Epoch: fs.Epoch[:8]}
	}
	tests := []struct {
		name    string
		after   knowledge.Position
		wantIDs string
		wantErr error
	}{
		{name: "the beginning lists every record once", wantIDs: "a,d,c"},
		{name: "a reader from before the trim, before a trimmed delete", after: pos(4, 0), wantErr: knowledge.ErrCursorTooOld},
		{name: "a reader from before the trim, at its start", after: pos(1, 0), wantErr: knowledge.ErrCursorTooOld},
		{name: "a reader from before the trim, past what it removed", after: pos(5, 0), wantIDs: "d,c"},
		{name: "a reader that started after the trim, within the trimmed part", after: pos(4, 5), wantIDs: "d,c"},
		{name: "after the last change", after: pos(6, 5), wantIDs: "c"},
		{name: "at the end", after: pos(7, 5), wantIDs: ""},
		{name: "a trim this feed never had", after: pos(7, 6), wantErr: knowledge.ErrCursorAhead},
		{name: "another database's log", after: knowledge.Position{At: changelog.Position{Seq: 5}, Epoch: "00000000"}, wantErr: knowledge.ErrCursorAhead},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := svc.Changes(ctx, tc.after, 10)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			var got []string
			for _, c := range p.Changes {
				got = append(got, c.ID)
			}
			if strings.Join(got, ",") != tc.wantIDs {
				t.Fatalf("changes %v, want %s", got, tc.wantIDs)
			}
		})
	}
	// A reader starting over pages through the trimmed feed to its end,
	// through cursors as get_changes hands them out.
	var at knowledge.Position
	var all []string
	for {
		back, err := knowledge.ParseCursor(at.Cursor())
		if err != nil || back != at {
			t.Fatalf("cursor %q of %+v reads back as %+v, %v", at.Cursor(), at, back, err)
		}
		p, err := svc.Changes(ctx, back, 1)
		if err != nil {
			t.Fatalf("paging from the beginning after %+v: %v", at, err)
		}
		for _, c := range p.Changes {
			all = append(all, c.ID)
			if p.At(c) != p.Next {
				t.Fatalf("the position of the last change %+v is not the page's next %+v", p.At(c), p.Next)
			}
		}
		at = p.Next
		if !p.HasMore {
			break
		}
	}
	if strings.Join(all, ",") != "a,d,c" || at.Trimmed.Seq != 5 {
		t.Fatalf("paged %v to %+v", all, at)
	}
}
