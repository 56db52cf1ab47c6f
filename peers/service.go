package peers

import (
	"context"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/moderation"
)

// CardReader reads a peer's agent card (and verifies its signature) at
// a URL with a token: the network half of adding a peer, which the
// domain does not do itself.
type CardReader interface {
	ReadCard(ctx context.Context, url, token string) (Card, error)
}

// Service runs the peers' commands over a Store: checks, the clock,
// and the card read before an add. It is safe for concurrent use.
type Service struct {
	store Store
	cards CardReader
	now   func() time.Time
}

// NewService returns the peers' service over store; cards reads the
// card of a peer being added (nil: adding is refused).
func NewService(store Store, cards CardReader, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, cards: cards, now: now}
}

// Store is the service's store, for the runtime's commands.
func (s *Service) Store() Store { return s.store }

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// Add checks in, reads the peer's card (pinning its signing key when it
// is signed) and adds the peer.
func (s *Service) Add(ctx context.Context, in AddInput) (Peer, error) {
	in, err := ValidateAdd(in)
	if err != nil {
		return Peer{}, err
	}
	if _, err := s.store.GetPeer(ctx, in.Name); err == nil {
		return Peer{}, ErrExists
	}
	if s.cards == nil {
		return Peer{}, fmt.Errorf("add peer %s: this server cannot reach peers", in.Name)
	}
	card, err := s.cards.ReadCard(ctx, in.URL, in.Token)
	if err != nil {
		return Peer{}, &CardError{URL: in.URL, Err: err}
	}
	return s.store.AddPeer(ctx, in, card, s.Now())
}

// CardError is a peer's card that could not be read or verified when it
// was added.
type CardError struct {
	URL string
	Err error
}

func (e *CardError) Error() string { return "read the agent card of " + e.URL + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *CardError) Unwrap() error { return e.Err }

// Pause, Resume and Remove run the operator's commands on the peer name.
func (s *Service) Pause(ctx context.Context, name string) (Peer, error) {
	if err := ValidateName(name); err != nil {
		return Peer{}, &NotFoundError{Name: clip(name, MaxNameLen)}
	}
	return s.store.PausePeer(ctx, name, s.Now())
}

// Resume resumes the peer name.
func (s *Service) Resume(ctx context.Context, name string) (Peer, error) {
	if err := ValidateName(name); err != nil {
		return Peer{}, &NotFoundError{Name: clip(name, MaxNameLen)}
	}
	return s.store.ResumePeer(ctx, name, s.Now())
}

// Remove removes the peer name (with purge, its documents too).
func (s *Service) Remove(ctx context.Context, name string, purge bool) error {
	if err := ValidateName(name); err != nil {
		return &NotFoundError{Name: clip(name, MaxNameLen)}
	}
	return s.store.RemovePeer(ctx, name, purge, s.Now())
}

// Moderate runs a moderator's action on the followed document of key:
// hide, unhide (reason required) or dismiss.
func (s *Service) Moderate(ctx context.Context, a moderation.Action, actor moderation.Actor, key, reason string) (moderation.Result, error) {
	if a != moderation.ActionDismiss || reason != "" {
		if err := input.Text("reason", reason, 1, moderation.MaxReasonLen, false); err != nil {
			return moderation.Result{}, err
		}
	}
	if !IsDocumentKey(key) {
		return moderation.Result{}, &moderation.ItemNotFoundError{Kind: moderation.KindDocument, ID: clip(key, 64)}
	}
	return s.store.ModerateDocument(ctx, moderation.Command{Action: a, Target: moderation.Target{Kind: moderation.KindDocument, ID: key},
		Actor: actor, Reason: reason, At: s.Now()})
}

// Document returns a followed document by key.
func (s *Service) Document(ctx context.Context, key string) (Document, error) {
	return s.store.GetDocument(ctx, key)
}

// List lists the peers.
func (s *Service) List(ctx context.Context) ([]Listed, error) { return s.store.ListPeers(ctx) }
