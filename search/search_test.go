package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/knowledge"
)

func find(t testing.TB, x *Index, q knowledge.Query) []knowledge.Hit {
	t.Helper()
	res, err := x.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return res.Hits
}

func ids(hits []knowledge.Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

// TestOffTopicQueriesFindNothing: questions about something the records do
// not cover find nothing, even when they share a common word with some
// record (MANY, OPEN, KEEP, FILE...).
func TestOffTopicQueriesFindNothing(t *testing.T) {
	f := setup(t, samples(t))
	for _, q := range []string{
		"how do I keep my sourdough starter alive longer",
		"best pizza places open late near me",
		"what is the capital city of australia",
		"recipe for chocolate chip cookies with brown butter",
		"how to tune a guitar string that keeps going flat",
		"train schedule from paris to lyon on sunday",
		"my cat will not stop scratching the sofa",
		"when does the next solar eclipse happen",
		"how many calories are in a banana",
		"who won the football world cup in 2018",
		"how long should I boil an egg",
		"translate good morning into japanese",
		"what time does the bank open on saturday",
		"symptoms of the common cold in children",
		"how to file my taxes online",
		"error: failed to push some refs to origin, updates were rejected because the tip of your current branch is behind",
		"the", "what is it", "?!", "",
	} {
		t.Run(q, func(t *testing.T) {
			if hits := find(t, f.idx, knowledge.Query{Text: q, Limit: 5}); len(hits) > 0 {
				t.Errorf("want nothing, got %v", ids(hits))
			}
		})
	}
}

// TestLongQuestions: a question pasted in full, with its filler words,
// still finds its record first.
func TestLongQuestions(t *testing.T) {
	f := setup(t, samples(t))
	for _, c := range []struct{ q, want string }{
		{"I'm running my service under systemd and after a few crashes systemctl status shows Failed with result start-limit-hit, what does that mean and how do I fix it", "systemd-start-limit-hit"},
		{"my Go HTTP client calls to a slow upstream API sometimes never return and the goroutines pile up until the process runs out of memory, how should I configure timeouts", "go-http-client-no-timeout"},
		{"we deploy on kubernetes and the pod gets killed with exit code 137, memory graphs show it hit the limit set in the deployment", "kubernetes-oomkilled-memory-limit"},
		{"how do I make an http request with a json payload from the command line", "curl-post-json"},
	} {
		t.Run(c.want, func(t *testing.T) {
			hits := find(t, f.idx, knowledge.Query{Text: c.q, Limit: 5})
			if len(hits) == 0 || hits[0].ID != c.want {
				t.Errorf("top = %v, want %s", ids(hits), c.want)
			}
		})
	}
}

func TestFiltersAndLimit(t *testing.T) {
	f := setup(t, samples(t))
	tests := []struct {
		name  string
		q     knowledge.Query
		check func(h knowledge.Hit) bool
		want  int // exact number of hits; -1 for "at least one"
	}{
		{"default limit is 3", knowledge.Query{Text: "bbolt"}, nil, 3},
		{"limit 1", knowledge.Query{Text: "bbolt", Limit: 1}, nil, 1},
		{"limit 5", knowledge.Query{Text: "bbolt", Limit: 5}, nil, 5},
		{"limit above the maximum is capped", knowledge.Query{Text: "bbolt", Limit: 50}, nil, 5},
		{"kind", knowledge.Query{Text: "timeout", Kind: "reference", Limit: 5},
			func(h knowledge.Hit) bool { return h.Kind == "reference" }, -1},
		{"product", knowledge.Query{Text: "too many open files", Product: "macos", Limit: 5},
			func(h knowledge.Hit) bool { return h.Product == "macos" }, -1},
		{"environment", knowledge.Query{Text: "memory limit killed", Environment: "kubernetes", Limit: 5},
			func(h knowledge.Hit) bool { return h.Environment == "kubernetes" }, -1},
		{"filters ignore case", knowledge.Query{Text: "database is locked", Product: "BBolt", Limit: 5},
			func(h knowledge.Hit) bool { return h.Product == "bbolt" }, -1},
		{"filters combine", knowledge.Query{Text: "locked", Product: "sqlite", Kind: "fix", Limit: 5},
			func(h knowledge.Hit) bool { return h.Product == "sqlite" && h.Kind == "fix" }, -1},
		{"a filter nothing has", knowledge.Query{Text: "database is locked", Product: "oracle"}, nil, 0},
		{"a filter is not a prefix match", knowledge.Query{Text: "database is locked", Product: "bbol"}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := find(t, f.idx, tt.q)
			if tt.want >= 0 && len(hits) != tt.want {
				t.Fatalf("%d hits %v, want %d", len(hits), ids(hits), tt.want)
			}
			if tt.want < 0 && len(hits) == 0 {
				t.Fatal("no hits")
			}
			for _, h := range hits {
				if tt.check != nil && !tt.check(h) {
					t.Errorf("hit %s (kind %s, product %s, environment %s) breaks the filter", h.ID, h.Kind, h.Product, h.Environment)
				}
			}
		})
	}
}

// TestFiltersDoNotReorder: a filter removes hits but never changes the
// order or scores of the others.
func TestFiltersDoNotReorder(t *testing.T) {
	f := setup(t, samples(t))
	all := find(t, f.idx, knowledge.Query{Text: "too many open files", Limit: 5})
	var linux []knowledge.Hit
	for _, h := range all {
		if h.Environment == "linux" {
			linux = append(linux, h)
		}
	}
	got := find(t, f.idx, knowledge.Query{Text: "too many open files", Limit: 5, Environment: "linux"})
	if len(linux) == 0 || len(got) < len(linux) {
		t.Fatalf("filtered %v, unfiltered linux hits %v", ids(got), ids(linux))
	}
	for i := range linux {
		if got[i].ID != linux[i].ID || got[i].Score != linux[i].Score {
			t.Fatalf("filtered %v (%v), want the unfiltered order %v", ids(got), got[i].Score, ids(linux))
		}
	}
}

func TestHitFields(t *testing.T) {
	f := setup(t, samples(t))
	hits := find(t, f.idx, knowledge.Query{Text: "start request repeated too quickly", Limit: 1})
	if len(hits) != 1 {
		t.Fatalf("hits %v", ids(hits))
	}
	h := hits[0]
	if h.ID != "systemd-start-limit-hit" || h.Kind != "fix" || h.Product != "systemd" || h.Environment != "linux" ||
		!strings.HasPrefix(h.Title, "systemd service fails") || h.URL == "" || h.Score <= 0 {
		t.Fatalf("hit %+v", h)
	}
	if !h.UpdatedAt.Equal(now().Truncate(time.Millisecond)) {
		t.Fatalf("updatedAt %s, want the import time %s", h.UpdatedAt, now())
	}
	if !strings.Contains(strings.ToLower(h.Snippet), "repeated too quickly") || strings.Contains(h.Snippet, "\n") {
		t.Fatalf("snippet %q should be one line around the match", h.Snippet)
	}
	if h.Body != "" {
		t.Fatal("a search (not research) returned the body")
	}
	res, err := f.idx.Search(context.Background(), knowledge.Query{Text: "start request repeated too quickly", Limit: 1, Research: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Hits[0].Body, "Symptom: `systemctl status myapp`") {
		t.Fatalf("research body %q", res.Hits[0].Body)
	}
}

// TestSnippetsAreText: markup in a record comes back as the same text,
// and the highlighter adds none.
func TestSnippetsAreText(t *testing.T) {
	body := `Payload <script>alert("x")</script> &amp; <mark>literal</mark> then the zebrafish marker word.`
	f := setup(t, fmt.Sprintf(`{"id":"html","kind":"fix","title":"Zebrafish record","body":%q}`+"\n", body))
	hits := find(t, f.idx, knowledge.Query{Text: "zebrafish"})
	if len(hits) != 1 {
		t.Fatalf("hits %v", ids(hits))
	}
	// The body is Markdown: its raw HTML is text, its entity a character.
	if want := strings.Replace(body, "&amp;", "&", 1); hits[0].Snippet != want {
		t.Fatalf("snippet %q, want the body as text %q", hits[0].Snippet, want)
	}
}

func TestLeadSnippet(t *testing.T) {
	long := strings.Repeat("word ", 100)
	s := leadSnippet(long)
	if !strings.HasSuffix(s, "…") || len([]rune(s)) > snippetLen+1 || strings.Contains(s, "  ") {
		t.Fatalf("lead snippet %q", s)
	}
	if got := leadSnippet("short\n\tbody"); got != "short body" {
		t.Fatalf("lead snippet %q", got)
	}
}

func TestSearchWritesNothing(t *testing.T) {
	f := setup(t, samples(t))
	before, err := f.db.Digest()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []knowledge.Query{
		{Text: "bbolt"}, {Text: "sourdough"}, {Text: "database is locked", Product: "bbolt", Research: true},
		{Text: strings.Repeat("many words ", 90)},
	} {
		find(t, f.idx, q)
	}
	if after, err := f.db.Digest(); err != nil || after != before {
		t.Fatalf("searching changed the store (%v)", err)
	}
}

// TestUserTextIsNotQuerySyntax: bleve query-string operators in the text
// are plain words.
func TestUserTextIsNotQuerySyntax(t *testing.T) {
	f := setup(t, samples(t))
	for _, q := range []string{`+title:zzz -body:bbolt`, `bbolt AND NOT sqlite`, `*`, `title:/.*/`, `"unbalanced`, `bbolt^100 (`} {
		t.Run(q, func(t *testing.T) {
			if _, err := f.idx.Search(context.Background(), knowledge.Query{Text: q}); err != nil {
				t.Fatalf("query text was parsed: %v", err)
			}
		})
	}
	if hits := find(t, f.idx, knowledge.Query{Text: "*"}); len(hits) != 0 {
		t.Fatalf("a wildcard matched %v", ids(hits))
	}
}

func TestQueryTermsAreBounded(t *testing.T) {
	var words []string
	for i := range 200 {
		words = append(words, fmt.Sprintf("w%dx", i))
	}
	f := setup(t, samples(t))
	if ts := f.idx.an.terms(strings.Join(words, " ")); len(ts) != maxTerms {
		t.Fatalf("%d terms, want %d", len(ts), maxTerms)
	}
}

func TestConcurrentSearchesAndWrites(t *testing.T) {
	f := setup(t, samples(t))
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 30 {
				if _, err := f.idx.Search(ctx, knowledge.Query{Text: "database locked", Research: i%2 == 0}); err != nil {
					t.Error(err)
					return
				}
			}
			_ = w
		})
	}
	wg.Go(func() {
		for i := range 5 {
			f.importString(t, fmt.Sprintf(`{"id":"c%d","kind":"fix","title":"concurrent %d","body":"database locked again"}`+"\n", i, i))
			if err := f.idx.Sync(ctx); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Go(func() {
		if _, err := f.idx.Rebuild(ctx); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	if err := f.idx.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if hits := find(t, f.idx, knowledge.Query{Text: "concurrent 4", Limit: 5}); len(hits) == 0 || hits[0].ID != "c4" {
		t.Fatalf("after concurrent writes: %v", ids(hits))
	}
}

func TestIndexDirLayout(t *testing.T) {
	f := setup(t, samples(t))
	for _, d := range []string{recordsDir} {
		if _, err := os.Stat(filepath.Join(f.dir, "index", d)); err != nil {
			t.Fatalf("index dir %s: %v", d, err)
		}
	}
}

func TestPlainSnippet(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"marks go, text stays", "a <mark>b</mark> &lt;i&gt; c", "a b <i> c"},
		{"cut words are dropped", "…ice of the <mark>service</mark> and mo…", "…of the service and…"},
		{"whitespace folds", "line\n\n\tnext", "line next"},
		{"a literal mark tag survives", "&lt;mark&gt;x&lt;/mark&gt;", "<mark>x</mark>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := plainSnippet(tt.in); got != tt.want {
				t.Fatalf("plainSnippet(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestSnippetsHoldNoMarkdown: a snippet is what a reader of the page
// reads, never the Markdown it was written in (issue 36): no fences,
// backticks, emphasis marks, link addresses or table pipes, whether it
// is cut around a match or from the start of the body.
func TestSnippetsHoldNoMarkdown(t *testing.T) {
	body := "Use **a ticker** in `for` with [the docs](https://go.dev/pkg/time):\n\n```go\nfor range time.Tick(d) {\n\tpoll()\n}\n```\n\n| flag | meaning |\n|---|---|\n| -d | ~~old~~ delay |\n"
	f := setup(t, fmt.Sprintf(`{"id":"md","kind":"fix","title":"Quetzal polling","body":%q}`+"\n", body))
	for _, q := range []string{"quetzal", "ticker", "poll", "delay"} {
		hits := find(t, f.idx, knowledge.Query{Text: q})
		if len(hits) != 1 {
			t.Fatalf("%s: hits %v", q, ids(hits))
		}
		s := hits[0].Snippet
		for _, syntax := range []string{"```", "`", "**", "](", "https://", "|", "~~", "---"} {
			if strings.Contains(s, syntax) {
				t.Errorf("%s: snippet %q holds %q", q, s, syntax)
			}
		}
		if !strings.Contains(s, "for range time.Tick(d)") && !strings.Contains(s, "a ticker") {
			t.Errorf("%s: snippet %q lost the text", q, s)
		}
	}
}
