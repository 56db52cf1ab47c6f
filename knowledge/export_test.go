package knowledge_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/knowledge"
)

func TestDeleteMany(t *testing.T) {
	ctx := context.Background()
	svc, db := setup(t)
	mustImport(t, svc, line("a", "A"), line("b", "B"), line("c", "C"))
	res, err := svc.DeleteMany(ctx, []string{"x", "a", "bad id", "c", "a", "y"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Deleted, ",") != "a,c" || strings.Join(res.NotFound, ",") != "x,bad id,y" {
		t.Fatalf("deleted %v, not found %v", res.Deleted, res.NotFound)
	}
	if p, err := db.ListRecords(ctx, "", 10); err != nil || p.Total != 1 || p.Records[0].ID != "b" {
		t.Fatalf("left %+v (%v)", p, err)
	}
	if _, chs, err := db.Changes(ctx, changelog.Position{Seq: 3}, 10); err != nil || len(chs) != 2 || chs[0].Op != knowledge.OpDelete || chs[1].ID != "c" {
		t.Fatalf("feed after the deletes: %+v (%v)", chs, err)
	}

	// Refused or empty-handed batches leave the file as it was.
	before, err := db.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DeleteMany(ctx, make([]string, knowledge.MaxDeleteBatch+1)); !errors.Is(err, input.ErrInvalid) {
		t.Fatalf("an over-large batch: %v, want an input error", err)
	}
	if res, err := svc.DeleteMany(ctx, []string{"x", "y"}); err != nil || len(res.Deleted) != 0 || len(res.NotFound) != 2 {
		t.Fatalf("only missing ids: %+v, %v", res, err)
	}
	if after, err := db.Digest(); err != nil || after != before {
		t.Fatalf("a delete that deleted nothing changed the file (%v)", err)
	}
}

func TestExportFilters(t *testing.T) {
	ctx := context.Background()
	svc, _ := setup(t)
	mustImport(t, svc, `{"id":"a","kind":"Fix","product":"pg","title":"A","body":"x"}`, `{"id":"b","kind":"howto","product":"PG","title":"B","body":"x"}`,
		`{"id":"c","kind":"fix","title":"C","body":"x"}`)
	for _, tt := range []struct {
		o    knowledge.ExportOptions
		want string
	}{
		{knowledge.ExportOptions{}, "a,b,c"},
		{knowledge.ExportOptions{Kind: "FIX"}, "a,c"},
		{knowledge.ExportOptions{Product: "pg"}, "a,b"},
		{knowledge.ExportOptions{Kind: "fix", Product: "pg"}, "a"},
		{knowledge.ExportOptions{Environment: "linux"}, ""},
	} {
		var b bytes.Buffer
		n, err := svc.Export(ctx, &b, tt.o)
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			if l != "" {
				r, err := knowledge.ParseLine(1, []byte(l))
				if err != nil {
					t.Fatalf("%+v: line %q does not import: %v", tt.o, l, err)
				}
				got = append(got, r.ID)
			}
		}
		if err != nil || n != len(got) || strings.Join(got, ",") != tt.want {
			t.Fatalf("%+v: %d %v (%v), want %s", tt.o, n, got, err, tt.want)
		}
	}
}
