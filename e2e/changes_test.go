package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/moderation"
)

// readFeed reads h's change feed from cursor to its end, pageSize entries
// a page, and returns the entries and the cursor after them.
func readFeed(t *testing.T, h *harness, cursor string, pageSize int) ([]api.Change, string) {
	t.Helper()
	var out []api.Change
	for range 1000 {
		p, err := h.anon.Changes(context.Background(), cursor, pageSize)
		if err != nil {
			t.Fatalf("read the change feed after %q: %v", cursor, err)
		}
		if len(p.Changes) > pageSize {
			t.Fatalf("a page of %d holds %d entries", pageSize, len(p.Changes))
		}
		if p.Server != h.cfg.PublicURL {
			t.Fatalf("the feed says its server is %q, want %q", p.Server, h.cfg.PublicURL)
		}
		out = append(out, p.Changes...)
		if p.NextCursor == "" {
			t.Fatal("a page without nextCursor")
		}
		cursor = p.NextCursor
		if !p.HasMore {
			return out, cursor
		}
	}
	t.Fatal("the feed never ends")
	return nil, ""
}

// feedUntil reads h's feed from cursor until the entries read hold what
// want says, within federationWithin (on PostgreSQL a change is in the
// log once every older transaction of the cluster has ended), and
// returns them and the cursor after them.
func feedUntil(t *testing.T, h *harness, cursor string, what string, want func(map[string]api.Change) bool) ([]api.Change, string) {
	t.Helper()
	var all []api.Change
	eventually(t, federationWithin, what, func() bool {
		chs, next := readFeed(t, h, cursor, 10)
		all, cursor = append(all, chs...), next
		return want(byDocument(all))
	})
	return all, cursor
}

// byDocument is the last entry of each document among chs.
func byDocument(chs []api.Change) map[string]api.Change {
	out := map[string]api.Change{}
	for _, c := range chs {
		out[c.Source+"/"+c.ID] = c
	}
	return out
}

// TestChangeFeed: the public feed lists a snapshot (every record, every
// answered discussion with its visible replies, never an open one) in
// pages, then what changed after, as upserts and tombstones (a deleted
// record, a hidden discussion, a hidden reply); it holds no private data;
// its cursor survives a restart; a bad cursor or page size is refused,
// and a cursor behind a trimmed log is CURSOR_EXPIRED.
func TestChangeFeed(t *testing.T) {
	h := start(t, nil)
	ctx := context.Background()
	lines := `{"id":"feed-1","kind":"howto","title":"Rotate the ocelot logs","body":"Use logrotate."}
{"id":"feed-2","kind":"howto","title":"Tune the ocelot cache","body":"Set the cache size."}
{"id":"feed-3","kind":"faq","title":"Why is the ocelot slow?","body":"It is cold."}
`
	if _, err := h.admin.ImportRecords(ctx, strings.NewReader(lines), true); err != nil {
		t.Fatal(err)
	}
	_, alice := h.agent("alice")
	bobAgent, bob := h.agent("bob")
	answered := discussionOf(t, h.ask(alice, "feed-ask-1", "How do I feed an ocelot safely?"))
	open := discussionOf(t, h.ask(alice, "feed-ask-2", "Is the ocelot nocturnal?"))
	first, err := bob.Reply(ctx, answered, "Feed it at dusk, raw meat only.")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Reply(ctx, answered, "And **never** by hand."); err != nil {
		t.Fatal(err)
	}

	chs, cursor := readFeed(t, h, "", 2)
	docs := byDocument(chs)
	for _, id := range []string{"record/feed-1", "record/feed-2", "record/feed-3", "discussion/" + answered} {
		if c, ok := docs[id]; !ok || c.Op != "upsert" {
			t.Fatalf("the snapshot has no upsert of %s: %+v", id, chs)
		}
	}
	if _, ok := docs["discussion/"+open]; ok {
		t.Fatal("the feed holds an open discussion")
	}
	d := docs["discussion/"+answered]
	if d.Discussion == nil || len(d.Discussion.Replies) != 2 || d.Discussion.Status != "answered" || d.Origin != nil ||
		d.URL != h.cfg.PublicURL+"/discussions/"+answered {
		t.Fatalf("answered discussion in the feed: %+v", d)
	}
	if r := docs["record/feed-2"]; r.Record == nil || r.Record.Title != "Tune the ocelot cache" || r.URL != h.cfg.PublicURL+"/records/feed-2" {
		t.Fatalf("record in the feed: %+v", r)
	}
	raw, _ := json.Marshal(chs)
	for _, private := range []string{bobAgent.ID, "authorId", "taskId", "hidden", "token"} {
		if strings.Contains(string(raw), private) {
			t.Fatalf("the feed holds %q: %s", private, raw)
		}
	}

	// Nothing new: an empty page that says so.
	if p, err := h.anon.Changes(ctx, cursor, 10); err != nil || len(p.Changes) != 0 || p.HasMore {
		t.Fatalf("feed at its end: %+v, %v", p, err)
	}

	// Changes after the snapshot: a record deleted, a reply hidden (its
	// discussion again, without it), then the discussion hidden.
	if _, err := h.admin.DeleteRecord(ctx, "feed-3"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.admin.Moderate(ctx, moderation.ActionHide, api.ModerationRequest{ID: first.Reply.ID, Reason: "test", By: "e2e"}); err != nil {
		t.Fatal(err)
	}
	chs, cursor2 := feedUntil(t, h, cursor, "the deleted record and the hidden reply in the feed", func(m map[string]api.Change) bool {
		c := m["discussion/"+answered]
		return m["record/feed-3"].Op == "delete" && c.Discussion != nil && len(c.Discussion.Replies) == 1
	})
	docs = byDocument(chs)
	if c := docs["record/feed-3"]; c.Op != "delete" || c.Record != nil {
		t.Fatalf("a deleted record in the feed: %+v", c)
	}
	if c := docs["discussion/"+answered]; c.Op != "upsert" || len(c.Discussion.Replies) != 1 ||
		strings.Contains(c.Discussion.Replies[0].Body, "dusk") {
		t.Fatalf("a discussion with a hidden reply in the feed: %+v", c)
	}
	if _, err := h.admin.Moderate(ctx, moderation.ActionHide, api.ModerationRequest{ID: answered, Reason: "test", By: "e2e"}); err != nil {
		t.Fatal(err)
	}
	chs, cursor3 := feedUntil(t, h, cursor2, "the hidden discussion in the feed", func(m map[string]api.Change) bool {
		return m["discussion/"+answered].Op == "delete"
	})
	if c := byDocument(chs)["discussion/"+answered]; c.Op != "delete" || c.Discussion != nil {
		t.Fatalf("a hidden discussion in the feed: %+v", chs)
	}
	raw, _ = json.Marshal(chs)
	if strings.Contains(string(raw), "raw meat") || strings.Contains(string(raw), "never") {
		t.Fatalf("the feed holds hidden text: %s", raw)
	}

	// The cursor is durable: after a restart it resumes where it was.
	cfg := h.cfg
	h.stop()
	h = startWith(t, cfg)
	if p, err := h.anon.Changes(ctx, cursor3, 10); err != nil || len(p.Changes) != 0 || p.HasMore {
		t.Fatalf("the feed after a restart, from the cursor kept: %+v, %v", p, err)
	}

	for _, bad := range []struct{ query, field string }{
		{"cursor=nonsense", "cursor"}, {"cursor=" + cursor3 + "x", "cursor"},
		{"pageSize=0", "pageSize"}, {"pageSize=501", "pageSize"}, {"pageSize=two", "pageSize"},
	} {
		resp, body := h.raw(http.MethodGet, "/api/v1/changes?"+bad.query, nil, "")
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), bad.field) {
			t.Fatalf("GET /api/v1/changes?%s: %d %s", bad.query, resp.StatusCode, body)
		}
	}

	// A cursor behind the log's trimmed point has expired: the reader
	// starts again (and the snapshot still lists every record). An ask's
	// events after it are trimmed (a record's latest event is kept).
	h.ask(client.New(h.url, client.WithToken(alice.Token())), "feed-ask-3", "Do ocelots swim?")
	if _, err := h.admin.ImportRecords(ctx, strings.NewReader(`{"id":"feed-4","kind":"faq","title":"Another ocelot","body":"Yes."}`+"\n"), true); err != nil {
		t.Fatal(err)
	}
	trim, ok := h.srv.Core().Store.(interface {
		TrimLog(ctx context.Context, before time.Time) (int, error)
	})
	if !ok {
		t.Fatal("the store does not trim")
	}
	if _, err := trim.TrimLog(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	_, err = h.anon.Changes(ctx, cursor3, 10)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusGone || ce.Reason != "CURSOR_EXPIRED" {
		t.Fatalf("a cursor behind the trimmed log: %v", err)
	}
	chs, _ = readFeed(t, h, "", 100)
	docs = byDocument(chs)
	if _, ok := docs["record/feed-4"]; !ok || len(docs) != 3 {
		t.Fatalf("the feed from the beginning after a trim: %+v", chs)
	}
}
