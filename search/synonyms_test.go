package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/knowledge"
)

func TestParseSynonyms(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		groups   int
		canon    map[string]string // analysed word -> its group's first
		wantLine int               // of the error; 0 for none
		wantMsg  string
	}{
		{name: "groups, comments and blank lines", in: "# databases\npostgres, postgresql, pg\n\n  k8s ,kubernetes  \n",
			groups: 2, canon: map[string]string{"postgresql": "postgr", "pg": "postgr", "kubernet": "k8"}},
		{name: "words are analysed: case and plurals fold", in: "Bucket, Buckets, BKT\n", groups: 1, canon: map[string]string{"bkt": "bucket"}},
		{name: "a group of one word folds nothing", in: "postgres\nqueue, queues\n", groups: 0, canon: map[string]string{}},
		{name: "empty entries are skipped", in: "a1,,b1,\n", groups: 1, canon: map[string]string{"b1": "a1"}},
		{name: "a phrase is refused", in: "postgres, pg\nhot backup, snapshot\n", wantLine: 2, wantMsg: "several words"},
		{name: "a stop word is refused", in: "the, a1\n", wantLine: 1, wantMsg: "stop word"},
		{name: "a word in two groups is refused", in: "pg, postgres\nsql, pg\n", wantLine: 2, wantMsg: "already in the group on line 1"},
		{name: "an over-long line is refused", in: "a1, b1\n" + strings.Repeat("x", maxSynonymLine+1) + "\n", wantLine: 2, wantMsg: "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSynonyms(strings.NewReader(tt.in))
			if tt.wantLine > 0 {
				var se *SynonymsError
				if !errors.As(err, &se) || se.Line != tt.wantLine || !strings.Contains(se.Msg, tt.wantMsg) {
					t.Fatalf("err = %v, want line %d: %s", err, tt.wantLine, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Len() != tt.groups || len(s.canon) != len(tt.canon) {
				t.Fatalf("%d groups %v, want %d %v", s.Len(), s.canon, tt.groups, tt.canon)
			}
			for w, c := range tt.canon {
				if s.canon[w] != c {
					t.Fatalf("%s folds into %q, want %q (all: %v)", w, s.canon[w], c, s.canon)
				}
			}
		})
	}
	a, err := ParseSynonyms(strings.NewReader("pg, postgres\nk8s, kubernetes\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseSynonyms(strings.NewReader("# the same, reordered\nk8s, kubernetes\npg, postgres\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseSynonyms(strings.NewReader("postgres, pg\nk8s, kubernetes\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest() != b.Digest() || a.Digest() == c.Digest() || (*Synonyms)(nil).Digest() != "" {
		t.Fatalf("digests %q %q %q: the same groups must agree, another first word must differ", a.Digest(), b.Digest(), c.Digest())
	}
}

func TestLoadSynonymsNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), SynonymsFile)
	if s, err := LoadSynonyms(path); err != nil || s.Len() != 0 {
		t.Fatalf("a missing file: %v, %v; want no synonyms", s, err)
	}
	if err := os.WriteFile(path, []byte("ok, fine\nhot backup, snapshot\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSynonyms(path); err == nil || !strings.HasPrefix(err.Error(), path+":2: ") {
		t.Fatalf("err = %v, want it to start with %s:2:", err, path)
	}
}

// TestSynonyms: words of a group find each other, once the index is
// rebuilt with the file; a start with a changed file rebuilds too; a bad
// file leaves the index as it was.
func TestSynonyms(t *testing.T) {
	ctx := context.Background()
	f := setup(t, samples(t))
	discs := loadDiscussions(t, f)
	top := func(text string) string {
		t.Helper()
		hits := searchQ(t, f.idx, knowledge.Query{Text: text, Limit: 5}).Hits
		if len(hits) == 0 {
			return ""
		}
		return hits[0].ID
	}
	const migrate = "migrating kfa to postgres from bbolt"
	if got := top(migrate); got != "" {
		t.Fatalf("before synonyms, %q found %s: 'postgres' is not 'postgresql'", migrate, got)
	}
	file := filepath.Join(f.dir, SynonymsFile)
	if err := os.WriteFile(file, []byte("# databases\npostgres, postgresql, pg\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := f.idx.Rebuild(ctx)
	if err != nil || st.SynonymGroups != 1 || st.Discussions != len(discs) || st.Records != 78 {
		t.Fatalf("rebuild: %+v, %v", st, err)
	}
	if got := top(migrate); got != discs["kfa-migrate-postgres"] {
		t.Fatalf("with synonyms, %q found %q; want the open discussion", migrate, got)
	}
	if got := top("pg deadlock"); got != "postgresql-deadlock-detected" {
		t.Fatalf("pg deadlock: top %q", got)
	}

	// A start with a changed file rebuilds with it.
	if err := f.idx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("postgres, postgresql, pg\ndeadlock, lockup\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.open(t)
	if got := top("pg lockup"); got != "postgresql-deadlock-detected" {
		t.Fatalf("after a start with a new group: top %q", got)
	}

	// A bad file is refused and the index keeps the synonyms it has.
	if err := os.WriteFile(file, []byte("postgres, postgresql\nhot backup, snapshot\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.idx.Rebuild(ctx); err == nil || !strings.Contains(err.Error(), ":2: ") {
		t.Fatalf("rebuild with a bad file: %v", err)
	}
	if got := top("pg lockup"); got != "postgresql-deadlock-detected" {
		t.Fatalf("after a refused rebuild: top %q", got)
	}
	if st, err := f.idx.Status(ctx); err != nil || st.SynonymGroups != 2 {
		t.Fatalf("status %+v: want the 2 groups still in use (%v)", st, err)
	}
}
