package peers

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
)

// MaxPeers bounds how many peers one server keeps: every peer costs a
// follower and a forwarder.
const MaxPeers = 100

// Store keeps the peers, their followed documents and the forwards.
// Every command is one transaction that loads what its decision names
// (the peer under its lock first), decides, and writes what the decision
// returned with its change-log events; a refusal writes nothing.
type Store interface {
	// AddPeer decides DecideAdd on the peer named in.Name (locked; and
	// the count of peers, at most MaxPeers) and writes it.
	AddPeer(ctx context.Context, in AddInput, card Card, now time.Time) (Peer, error)
	// PausePeer, ResumePeer: DecidePause, DecideResume.
	PausePeer(ctx context.Context, name string, now time.Time) (Peer, error)
	ResumePeer(ctx context.Context, name string, now time.Time) (Peer, error)
	// RemovePeer decides DecideRemove: the row goes, or stays as purging;
	// the peer's forwards go either way.
	RemovePeer(ctx context.Context, name string, purge bool, now time.Time) error
	// GetPeer returns the peer (a *NotFoundError for none).
	GetPeer(ctx context.Context, name string) (Peer, error)
	// ListPeers returns every peer (those being purged included), by
	// name, each with how many documents it holds (Documents).
	ListPeers(ctx context.Context) ([]Listed, error)
	// LeasePeer decides DecideLease for holder; ok false: not now.
	LeasePeer(ctx context.Context, name, holder string, now time.Time) (Peer, bool, error)
	// ApplyPage decides DecidePage on the peer (locked) and the documents
	// of the page's keys, and writes the documents, the peer and their
	// events.
	ApplyPage(ctx context.Context, name, holder, from, self string, pg Page, now time.Time) (PageOutcome, error)
	// RecordOutcome writes what a job's try did to the peer (locked):
	// DecideFailure when err is not "", else DecideSuccess. A peer gone
	// meanwhile is not an error.
	RecordOutcome(ctx context.Context, name string, job Job, holder, err string, now time.Time) error
	// PurgeDocuments deletes up to limit documents of a peer being purged
	// and, once it has none, the peer; it returns how many it deleted and
	// whether the purge is done.
	PurgeDocuments(ctx context.Context, name string, limit int) (int, bool, error)
	// GetDocument returns a followed document by key (ErrNoDocument for
	// none).
	GetDocument(ctx context.Context, key string) (Document, error)
	// ListDocuments returns up to limit documents with keys before
	// before ("" for the end), newest key first; next is "" on the last
	// page.
	ListDocuments(ctx context.Context, before string, limit int) ([]Document, string, error)

	// PlanForwards decides DecideForwards on the discussion (locked), the
	// peers and its forwards, and writes the new ones.
	PlanForwards(ctx context.Context, discussionID string, now time.Time) ([]Forward, error)
	// CloseForwards closes the open forwards of the discussion (locked)
	// when it is answered (DecideClose).
	CloseForwards(ctx context.Context, discussionID string, now time.Time) error
	// ListForwards lists up to limit open forwards to peer in state
	// (ForwardPending: in due order; ForwardAsked).
	ListForwards(ctx context.Context, peer string, state ForwardState, limit int) ([]Forward, error)
	// ClaimForward decides DecideClaim on the forward (locked); ok false:
	// not to be sent now.
	ClaimForward(ctx context.Context, peer, discussionID string, now time.Time) (Forward, bool, error)
	// ForwardSent and ForwardFailed record a send's outcome
	// (DecideSent, DecideSendFailed).
	ForwardSent(ctx context.Context, peer, discussionID string, a Asked, now time.Time) error
	ForwardFailed(ctx context.Context, peer, discussionID, err string, now time.Time) error
	// AddAnswer decides DecideAnswer on the forward of the answer's
	// discussion to its peer, a reply already stored under its id, and
	// what a reply decides on (the discussion, its WORKING tasks, its
	// members, loaded under the discussion's lock as a reply's are), and
	// writes the reply and everything it does, and the forwards it
	// changed, in one transaction.
	AddAnswer(ctx context.Context, a Answer, lim discussions.Limits, now time.Time) (AnswerOutcome, error)
	// ModerateDocument decides DecideModerate on the followed document
	// (locked) and writes it, the log's entry and its event.
	ModerateDocument(ctx context.Context, c moderation.Command) (moderation.Result, error)
}

// Listed is a peer as the operator's list shows it.
type Listed struct {
	Peer
	// Documents counts the documents followed from it.
	Documents int
}
