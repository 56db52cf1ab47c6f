package knowledge_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/store"
)

func setup(t *testing.T) (*knowledge.Service, *store.DB) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	now := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	return knowledge.NewService(db, func() time.Time { return now }), db
}

func line(id, title string) string {
	return fmt.Sprintf(`{"id":%q,"kind":"fix","title":%q,"body":"body of %s"}`, id, title, id)
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestImport(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		input     string
		strict    bool
		batch     int
		want      knowledge.ImportSummary // Errors compared by line and field only
		wantLines []int                   // numbers of the rejected lines
		wantIDs   int                     // records stored afterwards
	}{
		{"all good in several batches", lines(line("a", "A"), line("b", "B"), line("c", "C")), false, 2,
			knowledge.ImportSummary{Lines: 3, Added: 3, Written: true}, nil, 3},
		{"bad lines are skipped and numbered", lines(line("a", "A"), `{"id":"b"}`, "", line("c", "C"), "not json"), false, 0,
			knowledge.ImportSummary{Lines: 4, Added: 2, Rejected: 2, Written: true}, []int{2, 5}, 2},
		{"strict with a bad line writes nothing", lines(line("a", "A"), `{"id":"b"}`, line("c", "C")), true, 0,
			knowledge.ImportSummary{Lines: 3, Rejected: 1, Strict: true}, []int{2}, 0},
		{"strict and clean writes all", lines(line("a", "A"), line("b", "B"), line("c", "C")), true, 2,
			knowledge.ImportSummary{Lines: 3, Added: 3, Strict: true, Written: true}, nil, 3},
		{"crlf, bom and no final newline", "\xef\xbb\xbf" + line("a", "A") + "\r\n" + line("b", "B"), false, 0,
			knowledge.ImportSummary{Lines: 2, Added: 2, Written: true}, nil, 2},
		{"duplicate id: the last line wins", lines(line("a", "A"), line("a", "A2")), false, 0,
			knowledge.ImportSummary{Lines: 2, Added: 1, Updated: 1, Written: true}, nil, 1},
		{"an over-long line is reported, the next one read", lines(line("a", "A"), `{"id":"x","body":"`+strings.Repeat("y", knowledge.MaxLineBytes)+`"}`, line("c", "C")), false, 0,
			knowledge.ImportSummary{Lines: 3, Added: 2, Rejected: 1, Written: true}, []int{2}, 2},
		{"empty input", "", false, 0, knowledge.ImportSummary{}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, db := setup(t)
			got, err := svc.Import(ctx, strings.NewReader(tt.input), knowledge.ImportOptions{Strict: tt.strict, BatchSize: tt.batch})
			if err != nil {
				t.Fatal(err)
			}
			var gotLines []int
			for _, e := range got.Errors {
				gotLines = append(gotLines, e.Line)
			}
			got.Errors = nil
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tt.want) {
				t.Fatalf("summary %+v, want %+v", got, tt.want)
			}
			if fmt.Sprint(gotLines) != fmt.Sprint(tt.wantLines) {
				t.Fatalf("rejected lines %v, want %v", gotLines, tt.wantLines)
			}
			p, err := db.ListRecords(ctx, "", 100)
			if err != nil {
				t.Fatal(err)
			}
			if p.Total != tt.wantIDs || len(p.Records) != tt.wantIDs {
				t.Fatalf("%d records stored (total %d), want %d", len(p.Records), p.Total, tt.wantIDs)
			}
		})
	}
}

func TestReimportIsUnchanged(t *testing.T) {
	ctx := context.Background()
	svc, db := setup(t)
	in := lines(line("a", "A"), line("b", "B"))
	if _, err := svc.Import(ctx, strings.NewReader(in), knowledge.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	before, err := db.Digest()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := svc.Import(ctx, strings.NewReader(in), knowledge.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Unchanged != 2 || sum.Added+sum.Updated+sum.Rejected != 0 {
		t.Fatalf("re-import summary %+v, want 2 unchanged", sum)
	}
	if after, err := db.Digest(); err != nil || after != before {
		t.Fatalf("re-importing identical records changed the file (%v)", err)
	}
}

func TestImportReportsAtMostMaxReported(t *testing.T) {
	svc, _ := setup(t)
	sum, err := svc.Import(context.Background(), strings.NewReader(strings.Repeat("bad\n", 5)), knowledge.ImportOptions{MaxReported: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 5 || len(sum.Errors) != 2 || sum.Unreported != 3 {
		t.Fatalf("rejected %d, listed %d, unreported %d; want 5, 2, 3", sum.Rejected, len(sum.Errors), sum.Unreported)
	}
}

// failingReader delivers its text, then fails like a dropped connection.
type failingReader struct{ r *strings.Reader }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.r.Len() == 0 {
		return 0, fmt.Errorf("connection reset")
	}
	return f.r.Read(p)
}

func TestImportKeepsCommittedBatchesOnFailure(t *testing.T) {
	ctx := context.Background()
	svc, db := setup(t)
	in := lines(line("a", "A"), line("b", "B"), line("c", "C"))
	sum, err := svc.Import(ctx, &failingReader{strings.NewReader(in)}, knowledge.ImportOptions{BatchSize: 2})
	if err == nil || !strings.Contains(err.Error(), "connection reset") || !strings.Contains(err.Error(), "2 records committed") {
		t.Fatalf("error %v, want the read failure with the committed count", err)
	}
	if sum.Added != 2 {
		t.Fatalf("summary %+v, want 2 added", sum)
	}
	p, err := db.ListRecords(ctx, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 2 {
		t.Fatalf("%d records stored, want the 2 of the committed batch", p.Total)
	}
}

// batchSpy is the real store, noting the records of each upsert.
type batchSpy struct {
	knowledge.Store
	batches [][]int // Record.Size of each record, per transaction
}

func (s *batchSpy) UpsertRecords(ctx context.Context, recs []knowledge.Record, now time.Time) ([]knowledge.Outcome, error) {
	sizes := make([]int, len(recs))
	for i := range recs {
		sizes[i] = recs[i].Size()
	}
	s.batches = append(s.batches, sizes)
	return s.Store.UpsertRecords(ctx, recs, now)
}

// TestImportBatchesAreBoundedByBytes: a transaction holds at most
// BatchBytes of records (or one record larger than that), whatever the
// count, in lenient and strict imports alike.
func TestImportBatchesAreBoundedByBytes(t *testing.T) {
	rec := func(id string, body int) string {
		return fmt.Sprintf(`{"id":%q,"kind":"fix","title":"t","body":%q}`, id, strings.Repeat("b", body))
	}
	// Sizes: id (2) + kind (3) + title (1) + body.
	in := lines(rec("r1", 94), rec("r2", 94), rec("r3", 94), rec("r4", 394), rec("r5", 44), rec("r6", 44), rec("r7", 94))
	tests := []struct {
		name string
		o    knowledge.ImportOptions
		want string
	}{
		{"bytes bind", knowledge.ImportOptions{BatchBytes: 250}, "[[100 100] [100] [400] [50 50 100]]"},
		{"bytes bind, strict", knowledge.ImportOptions{BatchBytes: 250, Strict: true}, "[[100 100] [100] [400] [50 50 100]]"},
		{"count binds first", knowledge.ImportOptions{BatchBytes: 10_000, BatchSize: 3}, "[[100 100 100] [400 50 50] [100]]"},
		{"one record per batch", knowledge.ImportOptions{BatchBytes: 1}, "[[100] [100] [100] [400] [50] [50] [100]]"},
		{"defaults: one batch", knowledge.ImportOptions{}, "[[100 100 100 400 50 50 100]]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, db := setup(t)
			spy := &batchSpy{Store: db}
			svc := knowledge.NewService(spy, nil)
			sum, err := svc.Import(context.Background(), strings.NewReader(in), tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Added != 7 {
				t.Fatalf("summary %+v, want 7 added", sum)
			}
			if got := fmt.Sprint(spy.batches); got != tt.want {
				t.Fatalf("transactions %s, want %s", got, tt.want)
			}
		})
	}
}
