package search

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/tasks"
)

// community asks and answers through the domain services, replies going
// through the watch as they do in the server.
type community struct {
	tasks *tasks.Service
	discs *discussions.Service
	asker tasks.Asker
	other discussions.Author
}

func newCommunity(f *fixture, w *DiscussionWatch) *community {
	return &community{
		tasks: tasks.NewService(f.db, tasks.Limits{}, f.db.Secret(), now),
		discs: discussions.NewService(w.Wrap(f.db), discussions.Limits{}, f.db.Secret(), now),
		asker: tasks.Asker{ID: ulid.Make().String(), Name: "asker"},
		other: discussions.Author{ID: ulid.Make().String(), Name: "helper"},
	}
}

// ask opens a discussion and returns its id.
func (c *community) ask(t *testing.T, question, details string) string {
	t.Helper()
	task, _, err := c.tasks.Ask(context.Background(), tasks.AskInput{
		Asker:    c.asker,
		Message:  a2a.Message{MessageID: ulid.Make().String(), Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(question)}},
		Question: question, Details: details,
	})
	if err != nil {
		t.Fatal(err)
	}
	return task.DiscussionID
}

func (c *community) reply(t *testing.T, by discussions.Author, id, body string) {
	t.Helper()
	if _, err := c.discs.Reply(context.Background(), by, id, body); err != nil {
		t.Fatal(err)
	}
}

func research(t *testing.T, x *Index, text string) knowledge.Result {
	t.Helper()
	res, err := x.Search(context.Background(), knowledge.Query{Text: text, Research: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func discIDs(res knowledge.Result) []string {
	out := []string{}
	for _, d := range res.Discussions {
		out = append(out, d.ID)
	}
	return out
}

func TestResearchFindsAnsweredDiscussions(t *testing.T) {
	ctx := context.Background()
	f := setup(t, samples(t))
	w := NewDiscussionWatch()
	f.idx.o.Watch = w // as if opened with it
	c := newCommunity(f, w)

	answered := c.ask(t, "Why does my bbolt database file keep growing after deletes?", "Deleting keys does not shrink kfa.db.")
	c.reply(t, c.other, answered, "Freed pages go to the freelist; run bbolt compact to shrink the file.")
	open := c.ask(t, "How do I shrink a bbolt database file?", "")
	ownOnly := c.ask(t, "Can bbolt compact run while the database file is open?", "")
	c.reply(t, discussions.Author{ID: c.asker.ID, Name: c.asker.Name}, ownOnly, "Answering myself: the database file stays open.")
	if err := f.idx.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	res := research(t, f.idx, "bbolt database file grows, how to compact")
	if got := discIDs(res); len(got) != 1 || got[0] != answered {
		t.Fatalf("discussions %v, want only the answered one %s (open %s, self-answered %s)", got, answered, open, ownOnly)
	}
	d := res.Discussions[0]
	if d.ReplyCount != 1 || d.URL != "http://kfa.test/api/v1/discussions/"+answered ||
		!strings.Contains(d.Title, "keep growing") || !strings.Contains(d.Snippet, "compact") {
		t.Fatalf("discussion %+v", d)
	}
	if len(res.Hits) == 0 || res.Hits[0].Body == "" {
		t.Fatalf("research hits %+v should carry bodies", res.Hits)
	}
	if plain := find(t, f.idx, knowledge.Query{Text: "bbolt database file grows, how to compact"}); len(plain) == 0 {
		t.Fatal("no record hits")
	}
	plainRes, _ := f.idx.Search(ctx, knowledge.Query{Text: "bbolt database file grows, how to compact"})
	if plainRes.Discussions != nil {
		t.Fatal("a plain search returned discussions")
	}

	// A later reply is re-indexed through the watch.
	c.reply(t, c.other, answered, "Also consider the zanzibarian freelist option.")
	if err := f.idx.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	res = research(t, f.idx, "zanzibarian freelist")
	if got := discIDs(res); len(got) != 1 || res.Discussions[0].ReplyCount != 2 {
		t.Fatalf("after a second reply: %+v", res.Discussions)
	}
	// Off-topic research finds neither records nor discussions.
	if res := research(t, f.idx, "sourdough starter"); len(res.Hits)+len(res.Discussions) != 0 {
		t.Fatalf("off-topic research: %v %v", ids(res.Hits), discIDs(res))
	}
}

func TestResearchAtMostThreeDiscussions(t *testing.T) {
	ctx := context.Background()
	f := setup(t, samples(t))
	w := NewDiscussionWatch()
	f.idx.o.Watch = w
	c := newCommunity(f, w)
	for i := range 5 {
		id := c.ask(t, fmt.Sprintf("Walrus question number %d about nginx buffering", i), "")
		c.reply(t, c.other, id, "walrus answer")
	}
	if err := f.idx.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if res := research(t, f.idx, "walrus nginx buffering"); len(res.Discussions) != knowledge.MaxRelatedDisc {
		t.Fatalf("%d discussions, want %d", len(res.Discussions), knowledge.MaxRelatedDisc)
	}
}

// TestDiscussionsReconcileOnOpen: replies written while no index ran (the
// CLI in direct mode), and replies the watch did not see, are indexed.
func TestDiscussionsReconcileOnOpen(t *testing.T) {
	ctx := context.Background()
	f := setup(t, "")
	if err := f.idx.Close(); err != nil {
		t.Fatal(err)
	}
	c := newCommunity(f, NewDiscussionWatch()) // a watch nobody reads
	first := c.ask(t, "How do I rotate a capybara token?", "")
	c.reply(t, c.other, first, "Use kfa agent rotate.")
	f.open(t)
	if got := discIDs(research(t, f.idx, "rotate capybara token")); len(got) != 1 || got[0] != first {
		t.Fatalf("after reopening: %v", got)
	}
	// Answered while running but unseen by the index's watch: the answered
	// count moves, and the next sync reconciles.
	second := c.ask(t, "Where do capybara logs go?", "")
	c.reply(t, c.other, second, "To stderr.")
	if err := f.idx.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := discIDs(research(t, f.idx, "capybara logs")); len(got) != 1 || got[0] != second {
		t.Fatalf("after a sync: %v", got)
	}
}

// countingSource is the real store, counting the replies the index reads.
type countingSource struct {
	DiscussionSource
	read int
}

func (s *countingSource) ListReplies(ctx context.Context, q discussions.ReplyQuery) (discussions.ReplyPage, error) {
	p, err := s.DiscussionSource.ListReplies(ctx, q)
	s.read += len(p.Replies)
	return p, err
}

// The index reads only the replies it keeps, however many a discussion has.
func TestIndexReadsOnlyTheRepliesItKeeps(t *testing.T) {
	f := setup(t, "")
	c := newCommunity(f, NewDiscussionWatch())
	id := c.ask(t, "How many replies does the index read?", "")
	for i := range maxIndexedReplies + 25 {
		c.reply(t, c.other, id, fmt.Sprint("answer number ", i))
	}
	src := &countingSource{DiscussionSource: f.db}
	f.idx.o.Discussions = src
	if err := f.idx.indexDiscussions(context.Background(), []string{id}); err != nil {
		t.Fatal(err)
	}
	if src.read == 0 || src.read > maxIndexedReplies {
		t.Fatalf("the index read %d replies to keep at most %d", src.read, maxIndexedReplies)
	}
}
