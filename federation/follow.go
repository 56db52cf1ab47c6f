package federation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/peers"
)

// cardCheckEvery is how often a follower reads a peer's card again to
// check that its pinned key still signs it.
const cardCheckEvery = 10 * time.Minute

// follow runs one follower pass of the peer name, if its lease is free:
// pages of its feed from its cursor, each applied in one transaction
// with the cursor after it, until the feed has no more, the pass has
// read maxPagesPerPass pages, or the peer's minute of volume is spent.
// A failure is recorded with the peer (failing, retried with backoff).
// more says the feed holds more already.
func (r *Runner) follow(ctx context.Context, name string) (more bool) {
	p, ok, err := r.svc.Lease(ctx, name, r.holder)
	if err != nil || !ok {
		return false
	}
	c := r.peerClient(p)
	fail := func(err error) bool {
		if ctx.Err() != nil || errors.Is(err, peers.ErrLeaseLost) {
			return false
		}
		r.o.Observer.Failed(name, "follow")
		if rerr := r.svc.RecordOutcome(ctx, name, peers.JobFollow, r.holder, err); rerr != nil && ctx.Err() == nil {
			r.o.Log.Warn("federation: record a failure", "peer", name, "err", rerr.Error())
		}
		return false
	}
	if p.Key != "" && time.Since(p.LastSync) > cardCheckEvery {
		if err := c.CheckPinned(ctx, p); err != nil {
			return fail(err)
		}
	}
	for range maxPagesPerPass {
		now := r.svc.Now()
		left := p.Bounds.DocsPerMinute
		if now.Sub(p.Window) < time.Minute {
			left -= p.WindowDocs
		}
		if left <= 0 {
			return fail(fmt.Errorf("the peer's feed brought %d documents this minute, its bound; the follower waits for the next minute",
				p.Bounds.DocsPerMinute))
		}
		page, err := r.readPage(ctx, c, p, min(peers.MaxFeedPage, left))
		if err != nil {
			return fail(err)
		}
		pg, err := pageOf(page)
		if err != nil {
			return fail(err)
		}
		if err := r.answersBack(ctx, p, pg); err != nil {
			return fail(err)
		}
		out, err := r.svc.ApplyPage(ctx, name, r.holder, p.Cursor, pg)
		if err != nil {
			return fail(err)
		}
		p = out.Peer
		if !page.HasMore {
			return false
		}
	}
	return true
}

// readPage reads the page of p's feed after its cursor, of at most size
// entries, under peers.PageLimit: a page over it is asked for again with
// half the entries, down to one (a document over its bound fails the
// pass), so the memory a page takes stays bounded however a peer's
// documents are sized, and a feed of big documents still moves.
func (r *Runner) readPage(ctx context.Context, c *Client, p peers.Peer, size int) (api.ChangesPage, error) {
	for {
		page, err := c.Changes(ctx, p.Cursor, size, peers.PageLimit(size, p.Bounds))
		if !errors.Is(err, ErrTooBig) || size == 1 {
			return page, err
		}
		size /= 2
	}
}

// pageOf is a page of a peer's feed in the domain's form: entries that
// do not convert are left out, counted as rejected, and the page's
// server must be a URL.
func pageOf(page api.ChangesPage) (peers.Page, error) {
	server, err := peers.NormalizeURL("server", page.Server)
	if err != nil {
		return peers.Page{}, fmt.Errorf("the change feed names no server URL: %w", err)
	}
	if len(page.NextCursor) > peers.MaxCursorLen {
		return peers.Page{}, fmt.Errorf("the change feed's cursor is %d bytes, more than %d", len(page.NextCursor), peers.MaxCursorLen)
	}
	pg := peers.Page{Server: server, Next: page.NextCursor, HasMore: page.HasMore}
	for i, ch := range page.Changes {
		c, err := api.ToChange(ch)
		if err != nil {
			pg.Rejected = append(pg.Rejected, fmt.Sprintf("entry %d: %v", i, err))
			continue
		}
		pg.Changes = append(pg.Changes, c)
	}
	return pg, nil
}

// answersBack adds the replies of the peer's discussions that this
// server forwarded there (their origin is this server) to the local
// discussions they answer, before the page that holds them is applied:
// a crash in between applies the page again, and the answers are each
// stored once. Replies that came to the peer from elsewhere are not its
// own, and are left out.
func (r *Runner) answersBack(ctx context.Context, p peers.Peer, pg peers.Page) error {
	for _, ch := range pg.AnswersBack(r.svc.Self()) {
		if _, err := peers.CheckChange(ch, p.Bounds); err != nil {
			continue // DecidePage rejects it with the page
		}
		for _, rep := range ch.Thread.Replies {
			if rep.Origin != nil {
				continue
			}
			if err := r.answer(ctx, p, ch.Origin.ID, ch.ID, rep.ID, rep.AuthorName, rep.Body); err != nil {
				return err
			}
		}
	}
	return nil
}
