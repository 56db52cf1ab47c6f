package peers

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
)

const (
	self = "https://a.example"
	srvB = "https://b.example"
	srvC = "https://c.example"
)

func rec(id, title string) Change {
	return Change{Source: SourceRecord, ID: id, Op: OpUpsert, URL: srvB + "/records/" + id, At: t0,
		Record: &knowledge.Record{ID: id, Kind: "howto", Title: title, Body: "body of " + id, UpdatedAt: t0}}
}

func thread(id string, origin *Origin) Change {
	return Change{Source: SourceDiscussion, ID: id, Op: OpUpsert, URL: srvB + "/discussions/" + id, At: t0, Origin: origin,
		Thread: &Thread{ID: id, Title: "How?", AuthorName: "asker", Status: discussions.StatusAnswered, CreatedAt: t0,
			Replies: []ThreadReply{{ID: "r1", AuthorName: "bob", Body: "Like this.", CreatedAt: t0}}}}
}

func tomb(src Source, id string) Change {
	return Change{Source: src, ID: id, Op: OpDelete, URL: srvB + "/x/" + id, At: t0}
}

func followed(name string) Peer {
	return Peer{Name: name, Follow: true, Bounds: DefaultBounds, Lease: "h1", Cursor: "c0", AddedAt: t0}
}

func TestDecidePage(t *testing.T) {
	keyB := func(src Source, id string) string { return DocumentKey(srvB, src, id) }
	now := t0.Add(time.Minute)
	for _, tc := range []struct {
		name     string
		peer     Peer
		holder   string
		existing []Document
		page     Page
		err      error
		errText  string
		put      []string // keys
		del      []string
		rejected int
		failing  bool
	}{
		{name: "new documents", peer: followed("b"), holder: "h1",
			page: Page{Server: srvB, Changes: []Change{rec("r1", "one"), thread("d1", nil)}, Next: "c1"},
			put:  []string{keyB(SourceRecord, "r1"), keyB(SourceDiscussion, "d1")}},
		{name: "another holder's lease", peer: followed("b"), holder: "h2",
			page: Page{Server: srvB, Changes: []Change{rec("r1", "one")}, Next: "c1"}, err: ErrLeaseLost},
		{name: "a cursor moved meanwhile", peer: func() Peer { p := followed("b"); p.Cursor = "c9"; return p }(), holder: "h1",
			page: Page{Server: srvB, Changes: []Change{rec("r1", "one")}, Next: "c1"}, err: ErrLeaseLost},
		{name: "a tombstone deletes its peer's copy", peer: followed("b"), holder: "h1",
			existing: []Document{{Key: keyB(SourceRecord, "r1"), Peer: "b", Via: srvB, Origin: Origin{srvB, "r1"}}},
			page:     Page{Server: srvB, Changes: []Change{tomb(SourceRecord, "r1")}, Next: "c1"},
			del:      []string{keyB(SourceRecord, "r1")}},
		{name: "a tombstone of another peer's copy does nothing", peer: followed("b"), holder: "h1",
			existing: []Document{{Key: DocumentKey(srvC, SourceRecord, "r1"), Peer: "c", Via: srvC, Origin: Origin{srvC, "r1"}}},
			page:     Page{Server: srvB, Changes: []Change{{Source: SourceRecord, ID: "r1", Op: OpDelete, URL: srvB + "/records/r1", At: t0, Origin: &Origin{srvC, "r1"}}}, Next: "c1"}},
		{name: "a copy from the origin's server replaces another's", peer: followed("c"), holder: "h1",
			existing: []Document{{Key: DocumentKey(srvC, SourceRecord, "r1"), Peer: "b", Via: srvB, Origin: Origin{srvC, "r1"}}},
			page:     Page{Server: srvC, Changes: []Change{rec("r1", "one")}, Next: "c1"},
			put:      []string{DocumentKey(srvC, SourceRecord, "r1")}},
		{name: "a copy from elsewhere never replaces the origin's", peer: followed("b"), holder: "h1",
			existing: []Document{{Key: DocumentKey(srvC, SourceRecord, "r1"), Peer: "c", Via: srvC, Origin: Origin{srvC, "r1"}, Record: &knowledge.Record{}}},
			page:     Page{Server: srvB, Changes: []Change{func() Change { c := rec("r1", "one"); c.Origin = &Origin{srvC, "r1"}; return c }()}, Next: "c1"}},
		{name: "a placeholder of a question forwarded here stays", peer: followed("b"), holder: "h1",
			existing: []Document{{Key: keyB(SourceDiscussion, "d1"), Peer: "", LocalID: "local-d"}},
			page:     Page{Server: srvB, Changes: []Change{thread("d1", nil)}, Next: "c1"}},
		{name: "this server's own questions are not followed", peer: followed("b"), holder: "h1",
			page: Page{Server: srvB, Changes: []Change{thread("d1", &Origin{self + "/", "01JD"})}, Next: "c1"}},
		{name: "a bad document is left out, the rest applied", peer: followed("b"), holder: "h1",
			page: Page{Server: srvB, Changes: []Change{rec("bad id!", "x"), rec("r2", "two")}, Rejected: []string{"document 3: at: bad"}, Next: "c1"},
			put:  []string{keyB(SourceRecord, "r2")}, rejected: 2, failing: true},
		{name: "more than the minute allows", peer: func() Peer {
			p := followed("b")
			p.Bounds.DocsPerMinute, p.Window, p.WindowDocs = 3, now.Add(-30*time.Second), 2
			return p
		}(), holder: "h1", page: Page{Server: srvB, Changes: []Change{rec("r1", "one"), rec("r2", "two")}, Next: "c1"},
			errText: "more than the 1 left of the bound of 3 documents a minute"},
		{name: "a new minute starts over", peer: func() Peer {
			p := followed("b")
			p.Bounds.DocsPerMinute, p.Window, p.WindowDocs = 3, now.Add(-time.Minute), 3
			return p
		}(), holder: "h1", page: Page{Server: srvB, Changes: []Change{rec("r1", "one"), rec("r2", "two")}, Next: "c1"},
			put: []string{keyB(SourceRecord, "r1"), keyB(SourceRecord, "r2")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := PageState{Peer: &tc.peer, Existing: map[string]*Document{}}
			for i := range tc.existing {
				st.Existing[tc.existing[i].Key] = &tc.existing[i]
			}
			out, err := DecidePage(st, tc.holder, "c0", self, tc.page, now)
			switch {
			case tc.err != nil || tc.errText != "":
				if (tc.err != nil && !errors.Is(err, tc.err)) || (tc.errText != "" && (err == nil || !strings.Contains(err.Error(), tc.errText))) {
					t.Fatalf("err = %v, want %v %q", err, tc.err, tc.errText)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			var put, del []string
			for _, d := range out.Put {
				put = append(put, d.Key)
				if d.Peer != tc.peer.Name || d.Via != tc.page.Server || !d.FollowedAt.Equal(now) {
					t.Fatalf("document put: %+v", d)
				}
			}
			for _, d := range out.Delete {
				del = append(del, d.Key)
			}
			sortStrings(tc.put)
			if strings.Join(put, ",") != strings.Join(tc.put, ",") || strings.Join(del, ",") != strings.Join(tc.del, ",") {
				t.Fatalf("put %v del %v; want put %v del %v", put, del, tc.put, tc.del)
			}
			if len(out.Events) != len(put)+len(del) {
				t.Fatalf("%d events for %d writes", len(out.Events), len(put)+len(del))
			}
			if out.Rejected != tc.rejected || (out.Peer.State() == StateFailing) != tc.failing {
				t.Fatalf("rejected %d state %s (%s); want %d failing %v", out.Rejected, out.Peer.State(), out.Peer.LastError, tc.rejected, tc.failing)
			}
			if out.Peer.Cursor != "c1" || out.Peer.Server != srvB && out.Peer.Server != srvC || !out.Peer.CaughtUpAt.Equal(now) {
				t.Fatalf("peer after: %+v", out.Peer)
			}
		})
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestDecidePageKeepsLocalHiding: a document this server's moderators hid
// stays hidden when its peer sends it again.
func TestDecidePageKeepsLocalHiding(t *testing.T) {
	k := DocumentKey(srvB, SourceRecord, "r1")
	p := followed("b")
	st := PageState{Peer: &p, Existing: map[string]*Document{k: {Key: k, Peer: "b", Via: srvB, Origin: Origin{srvB, "r1"}, Hidden: true, HiddenAt: t0}}}
	out, err := DecidePage(st, "h1", "c0", self, Page{Server: srvB, Changes: []Change{rec("r1", "edited")}, Next: "c1"}, t0)
	if err != nil || len(out.Put) != 1 || !out.Put[0].Hidden || out.Put[0].Record.Title != "edited" || out.Put[0].Visible() {
		t.Fatalf("%+v %v", out.Put, err)
	}
}

func TestCheckChange(t *testing.T) {
	b := Bounds{DocsPerMinute: 100, MaxDocBytes: 2048}
	long := strings.Repeat("x", 3000)
	for _, tc := range []struct {
		name string
		c    func() Change
		want string // "" for valid
	}{
		{"a record", func() Change { return rec("r1", "t") }, ""},
		{"a thread", func() Change { return thread("d1", nil) }, ""},
		{"a tombstone", func() Change { return tomb(SourceRecord, "r1") }, ""},
		{"an unknown source", func() Change { c := rec("r1", "t"); c.Source = "task"; return c }, "source"},
		{"an unknown op", func() Change { c := rec("r1", "t"); c.Op = "drop"; return c }, "op"},
		{"a bad id", func() Change { return rec("../etc", "t") }, "id"},
		{"a javascript link", func() Change { c := rec("r1", "t"); c.URL = "javascript:alert(1)"; return c }, "url"},
		{"a record's javascript link", func() Change { c := rec("r1", "t"); c.Record.URL = "javascript:alert(1)"; return c }, "record: url"},
		{"a record of another id", func() Change { c := rec("r1", "t"); c.Record.ID = "r2"; return c }, "record.id"},
		{"an invalid record", func() Change { c := rec("r1", ""); return c }, "title"},
		{"over the bytes of a document", func() Change { c := rec("r1", "t"); c.Record.Body = long; return c }, "over the bound"},
		{"a tombstone with a body", func() Change { c := tomb(SourceRecord, "r1"); c.Record = &knowledge.Record{}; return c }, "holds a document"},
		{"no time", func() Change { c := rec("r1", "t"); c.At = time.Time{}; return c }, "at"},
		{"an origin that is no URL", func() Change { c := rec("r1", "t"); c.Origin = &Origin{"ftp://x", "r1"}; return c }, "origin.server"},
		{"an open thread", func() Change { c := thread("d1", nil); c.Thread.Status = "open"; return c }, "answered"},
		{"a thread without its replies' accepted one", func() Change { c := thread("d1", nil); c.Thread.AcceptedReplyID = "zz"; return c }, "acceptedReplyId"},
		{"a reply without a body", func() Change { c := thread("d1", nil); c.Thread.Replies[0].Body = ""; return c }, "body"},
		{"a reply with invalid UTF-8", func() Change { c := thread("d1", nil); c.Thread.Replies[0].Body = "\xff"; return c }, "body"},
		{"too many replies", func() Change {
			c := thread("d1", nil)
			for range MaxThreadReplies {
				c.Thread.Replies = append(c.Thread.Replies, c.Thread.Replies[0])
			}
			return c
		}, "replies"},
		{"a record holding a thread", func() Change { c := rec("r1", "t"); c.Thread = thread("r1", nil).Thread; return c }, "holds no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckChange(tc.c(), b)
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("CheckChange: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestDocumentKey(t *testing.T) {
	k := DocumentKey("HTTPS://B.example/", SourceRecord, "r1")
	if k != DocumentKey("https://b.example", SourceRecord, "r1") || !IsDocumentKey(k) {
		t.Fatalf("key %q is not one form of a server", k)
	}
	if k == DocumentKey("https://b.example", SourceDiscussion, "r1") || k == DocumentKey("https://c.example", SourceRecord, "r1") {
		t.Fatal("two origins share a key")
	}
	for _, s := range []string{"r1", "peer:", "peer:XYZ", KeyPrefix + strings.Repeat("A", 32)} {
		if IsDocumentKey(s) {
			t.Fatalf("IsDocumentKey(%q)", s)
		}
	}
}
