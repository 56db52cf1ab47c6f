package commands

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/storage"
)

// The kinds of federation (package peers): no store maps them, so every
// store keeps them generically, through their JSON codecs (jsonCodec,
// schema_trust.go).

// Peers are this server's peers, by name.
var Peers = storage.NewKind("peer", func(p *peers.Peer) storage.Key { return k(p.Name) }, jsonCodec[peers.Peer]("peer"))

// Followed are the documents followed from peers, by key (one per
// origin, whichever peer served it).
var Followed = storage.NewKind("peer.document", func(d *peers.Document) storage.Key { return k(d.Key) },
	jsonCodec[peers.Document]("followed document"))

// FollowedByPeer lists a peer's documents, and counts them (peer list);
// a placeholder (a question forwarded here) is of no peer.
var FollowedByPeer = Followed.Index("peer.document.peer", func(d *peers.Document) (storage.Key, bool) {
	return k(d.Peer), d.Peer != ""
}).Counted()

// The peers' commands, as a store's statistics name them.
const (
	CmdPeerAdd     = "peer-add"
	CmdPeerChange  = "peer-change"
	CmdPeerRemove  = "peer-remove"
	CmdPeerLease   = "peer-lease"
	CmdPeerPage    = "peer-page"
	CmdPeerOutcome = "peer-outcome"
	CmdPeerPurge   = "peer-purge"
)

// maxOpenForwards bounds the open forwards a removal drops in its
// transaction (the forwards of as many open discussions).
const maxOpenForwards = 100_000

// peerLock is the advisory lock of a peer's name: a peer that does not
// exist yet has no row to lock, so two adds of one name wait on it.
func peerLock(name string) string { return "peer/" + name }

// AddPeer implements peers.Store: the name's lock and its peer, every
// peer (the count), peers.DecideAdd, the peer and its event.
func (c *Commands) AddPeer(ctx context.Context, in peers.AddInput, card peers.Card, now time.Time) (peers.Peer, error) {
	var (
		existing *peers.Peer
		all      []peers.Peer
		out      peers.Peer
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdPeerAdd,
		Load: func(l storage.Loader) error {
			l.Lock(peerLock(in.Name))
			storage.One(l, Peers, k(in.Name), storage.Lock, &existing)
			storage.Many(l, Peers.Keys(), nil, peers.MaxPeers+1, storage.Read, &all)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			if existing == nil && len(all) >= peers.MaxPeers {
				return nil, peers.ErrTooManyPeers
			}
			p, evs, err := peers.DecideAdd(existing, in, card, now)
			if err != nil {
				return nil, err
			}
			out = p
			w := &storage.Writes{}
			storage.Put(w, Peers, nil, &out)
			w.Log(now, evs...)
			return w, nil
		}})
	return out, err
}

// changePeer runs a decision of the operator on the peer name under its
// lock, and writes the peer it returns with its events.
func (c *Commands) changePeer(ctx context.Context, name string, now time.Time,
	decide func(name string, p *peers.Peer, now time.Time) (peers.Peer, []changelog.Event, error)) (peers.Peer, error) {
	var (
		p   *peers.Peer
		out peers.Peer
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdPeerChange,
		Load: func(l storage.Loader) error {
			storage.One(l, Peers, k(name), storage.Lock, &p)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			next, evs, err := decide(name, p, now)
			if err != nil {
				return nil, err
			}
			out = next
			if len(evs) == 0 {
				return nil, nil
			}
			w := &storage.Writes{}
			storage.Put(w, Peers, p, &out)
			w.Log(now, evs...)
			return w, nil
		}})
	return out, err
}

// PausePeer implements peers.Store: peers.DecidePause.
func (c *Commands) PausePeer(ctx context.Context, name string, now time.Time) (peers.Peer, error) {
	return c.changePeer(ctx, name, now, peers.DecidePause)
}

// ResumePeer implements peers.Store: peers.DecideResume.
func (c *Commands) ResumePeer(ctx context.Context, name string, now time.Time) (peers.Peer, error) {
	return c.changePeer(ctx, name, now, peers.DecideResume)
}

// RemovePeer implements peers.Store: the peer under its lock,
// peers.DecideRemove, the peer deleted (or kept as purging) with its
// event.
func (c *Commands) RemovePeer(ctx context.Context, name string, purge bool, now time.Time) error {
	var (
		p    *peers.Peer
		open []peers.Forward
	)
	return c.e.Run(ctx, storage.Command{Name: CmdPeerRemove,
		Load: func(l storage.Loader) error {
			storage.One(l, Peers, k(name), storage.Lock, &p)
			storage.Many(l, ForwardsOpen, k(name), maxOpenForwards, storage.Lock, &open)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			out, err := peers.DecideRemove(name, p, purge, now)
			if err != nil {
				return nil, err
			}
			w := &storage.Writes{}
			if out.Keep != nil {
				storage.Put(w, Peers, p, out.Keep)
			} else {
				storage.Delete(w, Peers, p)
			}
			for i := range open {
				storage.Delete(w, Forwards, &open[i])
			}
			w.Log(now, out.Events...)
			return w, nil
		}})
}

// GetPeer implements peers.Store.
func (c *Commands) GetPeer(ctx context.Context, name string) (peers.Peer, error) {
	var p *peers.Peer
	err := c.e.View(ctx, CmdRead, func(l storage.Loader) error {
		storage.One(l, Peers, k(name), storage.Read, &p)
		return nil
	})
	if err != nil {
		return peers.Peer{}, err
	}
	if p == nil {
		return peers.Peer{}, &peers.NotFoundError{Name: name}
	}
	return *p, nil
}

// ListPeers implements peers.Store: the peers, then the count of each
// one's documents (two round trips).
func (c *Commands) ListPeers(ctx context.Context) ([]peers.Listed, error) {
	var (
		all    []peers.Peer
		counts []int
	)
	err := c.e.View(ctx, CmdRead, func(l storage.Loader) error {
		storage.Many(l, Peers.Keys(), nil, peers.MaxPeers+1, storage.Read, &all)
		if err := l.Flush(); err != nil {
			return err
		}
		counts = make([]int, len(all))
		for i := range all {
			l.Count(FollowedByPeer, k(all[i].Name), &counts[i])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]peers.Listed, len(all))
	for i, p := range all {
		out[i] = peers.Listed{Peer: p, Documents: counts[i]}
	}
	return out, nil
}

// LeasePeer implements peers.Store: the peer under its lock,
// peers.DecideLease, the peer with its lease.
func (c *Commands) LeasePeer(ctx context.Context, name, holder string, now time.Time) (peers.Peer, bool, error) {
	var (
		p   *peers.Peer
		out peers.Peer
		ok  bool
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdPeerLease,
		Load: func(l storage.Loader) error {
			storage.One(l, Peers, k(name), storage.Lock, &p)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			ok = false
			if p == nil {
				return nil, nil
			}
			if out, ok = peers.DecideLease(*p, holder, now); !ok {
				return nil, nil
			}
			w := &storage.Writes{}
			storage.Put(w, Peers, p, &out)
			return w, nil
		}})
	return out, ok, err
}

// ApplyPage implements peers.Store: the peer under its lock, the
// documents of the page's keys under theirs, peers.DecidePage, the
// documents, the peer and the events.
func (c *Commands) ApplyPage(ctx context.Context, name, holder, from, self string, pg peers.Page, now time.Time) (peers.PageOutcome, error) {
	var (
		p    *peers.Peer
		docs []peers.Document
		out  peers.PageOutcome
	)
	keys := pg.Keys(self)
	dk := make([]storage.Key, len(keys))
	for i, key := range keys {
		dk[i] = k(key)
	}
	err := c.e.Run(ctx, storage.Command{Name: CmdPeerPage,
		Load: func(l storage.Loader) error {
			storage.One(l, Peers, k(name), storage.Lock, &p)
			storage.All(l, Followed, dk, storage.Lock, &docs)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			st := peers.PageState{Peer: p, Existing: map[string]*peers.Document{}}
			for i := range docs {
				st.Existing[docs[i].Key] = &docs[i]
			}
			var err error
			if out, err = peers.DecidePage(st, holder, from, self, pg, now); err != nil {
				return nil, err
			}
			w := &storage.Writes{}
			for i := range out.Put {
				storage.Put(w, Followed, st.Existing[out.Put[i].Key], &out.Put[i])
			}
			for i := range out.Delete {
				storage.Delete(w, Followed, st.Existing[out.Delete[i].Key])
			}
			storage.Put(w, Peers, p, &out.Peer)
			w.Log(now, out.Events...)
			return w, nil
		}})
	return out, err
}

// RecordOutcome implements peers.Store: the peer under its lock,
// peers.DecideFailure or peers.DecideSuccess, the peer.
func (c *Commands) RecordOutcome(ctx context.Context, name string, job peers.Job, holder, errText string, now time.Time) error {
	var p *peers.Peer
	return c.e.Run(ctx, storage.Command{Name: CmdPeerOutcome,
		Load: func(l storage.Loader) error {
			storage.One(l, Peers, k(name), storage.Lock, &p)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			if p == nil || p.Purging {
				return nil, nil
			}
			next := peers.DecideSuccess(*p, job)
			if errText != "" {
				next = peers.DecideFailure(*p, job, holder, errText, now)
			}
			w := &storage.Writes{}
			storage.Put(w, Peers, p, &next)
			return w, nil
		}})
}

// PurgeDocuments implements peers.Store: the peer under its lock and up
// to limit of its documents, all deleted; the peer too once it has none
// left.
func (c *Commands) PurgeDocuments(ctx context.Context, name string, limit int) (int, bool, error) {
	var (
		p    *peers.Peer
		docs []peers.Document
		n    int
		done bool
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdPeerPurge,
		Load: func(l storage.Loader) error {
			storage.One(l, Peers, k(name), storage.Lock, &p)
			storage.Many(l, FollowedByPeer, k(name), limit, storage.Lock, &docs)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			n, done = 0, true
			if p == nil || !p.Purging {
				return nil, nil
			}
			w := &storage.Writes{}
			for i := range docs {
				storage.Delete(w, Followed, &docs[i])
			}
			n = len(docs)
			if done = len(docs) < limit; done {
				storage.Delete(w, Peers, p)
			}
			return w, nil
		}})
	return n, done, err
}

// GetDocument implements peers.Store.
func (c *Commands) GetDocument(ctx context.Context, key string) (peers.Document, error) {
	var d *peers.Document
	err := c.e.View(ctx, CmdRead, func(l storage.Loader) error {
		storage.One(l, Followed, k(key), storage.Read, &d)
		return nil
	})
	if err != nil {
		return peers.Document{}, err
	}
	if d == nil {
		return peers.Document{}, peers.ErrNoDocument
	}
	return *d, nil
}

// ListDocuments implements peers.Store: up to limit documents with keys
// before before ("" for the end), newest key first (a reverse range
// whose end is before, which it holds, so one more is read).
func (c *Commands) ListDocuments(ctx context.Context, before string, limit int) ([]peers.Document, string, error) {
	var docs []peers.Document
	err := c.e.View(ctx, CmdRead, func(l storage.Loader) error {
		r := storage.Range{Index: Followed.Keys(), Of: storage.NoRef, Limit: limit + 1, Reverse: true, Dst: &docs}
		if before != "" {
			r.To, r.Limit = k(before), limit+2
		}
		l.Range(r)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	if before != "" && len(docs) > 0 && docs[0].Key == before {
		docs = docs[1:]
	}
	next := ""
	if len(docs) > limit {
		docs = docs[:limit]
		next = docs[limit-1].Key
	}
	return docs, next, nil
}

// ModerateDocument implements peers.Store: the document under its lock,
// peers.DecideModerate, the document, the moderation log's entry and the
// event.
func (c *Commands) ModerateDocument(ctx context.Context, cmd moderation.Command) (moderation.Result, error) {
	var (
		d   *peers.Document
		out peers.ModerateOutcome
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdModerate,
		Load: func(l storage.Loader) error {
			storage.One(l, Followed, k(cmd.Target.ID), storage.Lock, &d)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			var err error
			if out, err = peers.DecideModerate(d, cmd); err != nil || out.Document == nil {
				return nil, err
			}
			w := &storage.Writes{}
			storage.Put(w, Followed, d, out.Document)
			storage.Put(w, ModerationLog, nil, out.Entry)
			w.Log(cmd.At, out.Events...)
			return w, nil
		}})
	return out.Result, err
}
