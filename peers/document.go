package peers

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
)

// Document is a document followed from a peer, kept under its key: one
// per origin (the server it was written on, its source and its id
// there), whichever peer served it.
type Document struct {
	// Key identifies the document's origin (DocumentKey): its id in
	// search hits, moderation and MCP's fetch.
	Key string `json:"key"`
	// Peer is the peer it was followed from; "" for a placeholder: a
	// question forwarded here, whose origin is the local discussion
	// LocalID (a peer's copy of it is never followed).
	Peer    string `json:"peer"`
	LocalID string `json:"localId,omitempty"`
	Source  Source `json:"source"`
	// ID and URL are its id and page on the peer that served it; Via is
	// that peer's public URL.
	ID     string `json:"id"`
	URL    string `json:"url"`
	Via    string `json:"via"`
	Origin Origin `json:"origin"`
	// At is when it last changed, as the peer says (never after when it
	// was followed).
	At     time.Time         `json:"at"`
	Record *knowledge.Record `json:"record,omitempty"`
	Thread *Thread           `json:"thread,omitempty"`
	Size   int               `json:"size"`
	// FollowedAt is when this server last wrote it.
	FollowedAt time.Time `json:"followedAt"`
	// Hidden is set while this server's moderators hide it: whatever the
	// peer sends, it stays out of search until it is shown.
	Hidden   bool      `json:"hidden,omitempty"`
	HiddenAt time.Time `json:"hiddenAt,omitzero"`
}

// KeyPrefix starts every followed document's key: no record id (their
// characters exclude ':') nor discussion id can start with it.
const KeyPrefix = "peer:"

// DocumentKey is the key of the document of origin server (a public URL),
// source and id there.
func DocumentKey(server string, src Source, id string) string {
	if n, err := NormalizeURL("server", server); err == nil {
		server = n
	}
	sum := sha256.Sum256([]byte(server + "\n" + string(src) + "\n" + id))
	return KeyPrefix + hex.EncodeToString(sum[:16])
}

// IsDocumentKey reports whether s is shaped like a DocumentKey.
func IsDocumentKey(s string) bool {
	h, ok := strings.CutPrefix(s, KeyPrefix)
	if !ok || len(h) != 32 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// Visible reports whether d is shown: a followed document this server's
// moderators do not hide (never a placeholder).
func (d Document) Visible() bool { return d.Peer != "" && !d.Hidden }

// Title is d's title: a record's title, a discussion's question.
func (d Document) Title() string {
	switch {
	case d.Record != nil:
		return d.Record.Title
	case d.Thread != nil:
		return d.Thread.Title
	}
	return ""
}

// Page is a page of a peer's feed as the follower read it.
type Page struct {
	// Server is the peer's public URL, as the page names it (normalized).
	Server  string
	Changes []Change
	// Rejected are the entries that did not even convert (a time that
	// does not parse), with why; they are counted as rejected.
	Rejected []string
	Next     string
	HasMore  bool
}

// PageState is what a page is decided on: the peer (locked), and the
// documents of the page's keys that this server holds, by key.
type PageState struct {
	Peer     *Peer
	Existing map[string]*Document
}

// PageOutcome is what a page does.
type PageOutcome struct {
	// Peer is the peer after: its new cursor, its minute of volume, its
	// health.
	Peer Peer
	// Put are the documents to write (new or changed); Delete, those to
	// delete, as they were loaded.
	Put    []Document
	Delete []Document
	// Rejected counts the entries left out: invalid, oversized.
	Rejected int
	Events   []changelog.Event
}

// Keys are the keys of the documents pg's entries name, which DecidePage
// needs loaded; self is this server's public URL (its own documents are
// not followed).
func (pg Page) Keys(self string) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range pg.Changes {
		k, ok := pg.key(c, self)
		if ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// key is the key of c's document; ok is false for a document of self.
func (pg Page) key(c Change, self string) (string, bool) {
	server, id := pg.Server, c.ID
	if c.Origin != nil {
		server, id = c.Origin.Server, c.Origin.ID
	}
	if SameServer(server, self) {
		return "", false
	}
	return DocumentKey(server, c.Source, id), true
}

// AnswersBack are the discussions of pg whose origin is self: questions
// this server forwarded to the peer, whose replies come back as replies
// of the local discussion (not as followed documents).
func (pg Page) AnswersBack(self string) []Change {
	var out []Change
	for _, c := range pg.Changes {
		if c.Source == SourceDiscussion && c.Op == OpUpsert && c.Origin != nil && c.Thread != nil &&
			SameServer(c.Origin.Server, self) {
			out = append(out, c)
		}
	}
	return out
}

// DecidePage applies pg, read by the pass of holder from the cursor from,
// to the peer: each entry is checked (CheckChange), then put, replaced
// or deleted (decideDocument) under its key; the peer's cursor moves to
// pg.Next. A page bigger than what is left of the peer's minute is
// refused whole (the follower asks for no more than that). Entries that
// fail their checks are left out, and the peer is failing with the
// reason; the cursor moves past them all the same, so that one bad
// document does not stop the feed. A lease lost or a cursor moved is
// ErrLeaseLost, which writes nothing.
func DecidePage(st PageState, holder, from, self string, pg Page, now time.Time) (PageOutcome, error) {
	p := st.Peer
	if p == nil {
		return PageOutcome{}, ErrLeaseLost
	}
	if p.Lease != holder || p.Cursor != from || p.Paused || !p.Follow {
		return PageOutcome{}, ErrLeaseLost
	}
	out := PageOutcome{Peer: *p}
	np := &out.Peer
	if now.Sub(np.Window) >= time.Minute {
		np.Window, np.WindowDocs = now, 0
	}
	if left := np.Bounds.DocsPerMinute - np.WindowDocs; len(pg.Changes)+len(pg.Rejected) > left {
		return PageOutcome{}, fmt.Errorf("the page holds %d documents, more than the %d left of the bound of %d documents a minute",
			len(pg.Changes)+len(pg.Rejected), max(left, 0), np.Bounds.DocsPerMinute)
	}
	np.WindowDocs += len(pg.Changes) + len(pg.Rejected)
	var firstErr string
	reject := func(msg string) {
		out.Rejected++
		if firstErr == "" {
			firstErr = msg
		}
	}
	for _, r := range pg.Rejected {
		reject(r)
	}
	docs := map[string]*Document{}
	for k, d := range st.Existing {
		docs[k] = d
	}
	written := map[string]bool{}
	for _, c := range pg.Changes {
		size, err := CheckChange(c, np.Bounds)
		if err != nil {
			reject(fmt.Sprintf("document %s %s: %v", c.Source, clip(c.ID, 64), err))
			continue
		}
		key, ok := pg.key(c, self)
		if !ok {
			continue
		}
		in := documentOf(p.Name, pg.Server, key, c, size, now)
		put, del := decideDocument(docs[key], in, p.Name)
		switch {
		case put != nil:
			docs[key] = put
			written[key] = true
		case del:
			docs[key] = nil
			written[key] = true
		}
	}
	for _, k := range sortedKeys(written) {
		switch d := docs[k]; {
		case d != nil:
			out.Put = append(out.Put, *d)
		case st.Existing[k] != nil:
			out.Delete = append(out.Delete, *st.Existing[k])
		default:
			continue // put, then deleted, in one page: nothing was there
		}
		out.Events = append(out.Events, changelog.Event{Kind: EventDocument, ID: k, Ref: p.Name, At: now})
	}
	np.Cursor, np.Server, np.LastSync = pg.Next, pg.Server, now
	np.LeaseUntil = now.Add(LeaseTTL)
	if !pg.HasMore {
		np.CaughtUpAt = now
	}
	if out.Rejected > 0 {
		msg := fmt.Sprintf("%d documents left out; the first: %s", out.Rejected, firstErr)
		np.Follower.Failures++
		np.Follower.RetryAt = now
		np.LastError, np.LastErrorAt = clip(msg, maxErrorLen), now
	} else {
		np.Follower = Health{}
	}
	return out, nil
}

// documentOf is the document c, of key, served by peer from server.
func documentOf(peer, server, key string, c Change, size int, now time.Time) Document {
	o := Origin{Server: server, ID: c.ID}
	if c.Origin != nil {
		o = *c.Origin
	}
	at := c.At
	if at.After(now) {
		at = now
	}
	return Document{Key: key, Peer: peer, Source: c.Source, ID: c.ID, URL: c.URL, Via: server, Origin: o, At: at,
		Record: c.Record, Thread: c.Thread, Size: size, FollowedAt: now}
}

// decideDocument is what an entry from peer does to the document of its
// key (existing, nil for none): put is the document to write, del says to
// delete it. A placeholder of a local question is never replaced. A
// peer's copy replaces another peer's only when its peer is the
// document's origin server and the other's is not. A tombstone deletes
// only the copy of its own peer. Local moderation's hiding stays.
func decideDocument(existing *Document, in Document, peer string) (put *Document, del bool) {
	if in.Record == nil && in.Thread == nil { // a tombstone
		return nil, existing != nil && existing.Peer == peer
	}
	if existing != nil {
		switch {
		case existing.Peer == "":
			return nil, false
		case existing.Peer != peer && !(SameServer(in.Via, in.Origin.Server) && !SameServer(existing.Via, existing.Origin.Server)):
			return nil, false
		}
		in.Hidden, in.HiddenAt = existing.Hidden, existing.HiddenAt
	}
	return &in, false
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// DecidePlaceholder is the placeholder of a question a peer forwarded
// here, d (its Origin set): under its origin's key, it stands for the
// local discussion, so that no peer's copy of that origin is followed
// here (existing, such a copy, is replaced). ok is false for a discussion
// of no origin.
func DecidePlaceholder(existing *Document, d discussions.Discussion, now time.Time) (Document, []changelog.Event, bool) {
	if d.Origin == nil || d.Origin.Server == "" {
		return Document{}, nil, false
	}
	key := DocumentKey(d.Origin.Server, SourceDiscussion, d.Origin.ID)
	p := Document{Key: key, LocalID: d.ID, Source: SourceDiscussion, ID: d.Origin.ID, Via: d.Origin.Server,
		Origin: Origin{Server: d.Origin.Server, ID: d.Origin.ID}, At: now, FollowedAt: now}
	var evs []changelog.Event
	if existing != nil && existing.Peer != "" {
		evs = append(evs, changelog.Event{Kind: EventDocument, ID: key, Ref: existing.Peer, At: now})
	}
	return p, evs, true
}

// PlaceholderKey is the key of d's placeholder ("" for a discussion of
// no origin).
func PlaceholderKey(d discussions.Discussion) string {
	if d.Origin == nil || d.Origin.Server == "" {
		return ""
	}
	return DocumentKey(d.Origin.Server, SourceDiscussion, d.Origin.ID)
}
