package push

import (
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/changelog"
)

// The outbox's transitions, as pure decisions: the sender's attempts, the
// operator's retry and the purge of finished deliveries. A store loads
// the delivery under its lock and writes what these return.

// DecideAttempt decides recording attempt a on d (nil when the outbox
// holds no such delivery): ErrDeliveryNotFound, ErrNotPending for a
// delivery that is pending no more (its config was deleted meanwhile, or
// an operator retried it and a sender finished it), else the delivery
// after the attempt, with record true. An attempt d has counted already
// (Delivery.Recorded: a record tried again after its first try's COMMIT
// went unanswered, which committed after all) changes nothing: d comes
// back as it is, whatever its state, with record false.
func DecideAttempt(d *Delivery, a Attempt) (out Delivery, record bool, err error) {
	switch {
	case d == nil:
		return Delivery{}, false, ErrDeliveryNotFound
	case d.Recorded(a):
		return *d, false, nil
	case d.State != Pending:
		return Delivery{}, false, ErrNotPending
	}
	out = *d
	out.Recent = append([]Attempt(nil), d.Recent...)
	out.Apply(a)
	return out, true, nil
}

// DecideClaim decides a sender's claim of d (nil: no such delivery)
// before it sends it (see Claimer): a pending delivery due at or before
// at is claimed, and due at until instead; any other is not (another
// sender claimed it, or its attempt was recorded meanwhile) and must not
// be sent.
func DecideClaim(d *Delivery, at, until time.Time) (out Delivery, claimed bool) {
	if d == nil || d.State != Pending || d.NextAt.After(at) {
		return Delivery{}, false
	}
	out = *d
	out.NextAt = until
	return out, true
}

// DecideRetry decides an operator's retry of d at at (nil: no such
// delivery); configExists says whether its config is still on its task.
// Only a failed delivery is retried (ErrNotFailed), and only while its
// config exists (ErrNotFound). A retried delivery is pending again, due at
// at, with a new retry period from at; it is due in the log.
func DecideRetry(d *Delivery, configExists bool, at time.Time) (Delivery, changelog.Event, error) {
	switch {
	case d == nil:
		return Delivery{}, changelog.Event{}, ErrDeliveryNotFound
	case d.State != Failed:
		return Delivery{}, changelog.Event{}, ErrNotFailed
	case !configExists:
		return Delivery{}, changelog.Event{}, ErrNotFound
	}
	out := *d
	out.State, out.NextAt, out.FinishedAt, out.Reason, out.RetriedAt = Pending, at, time.Time{}, "", at
	return out, DueEvent(&out, at), nil
}

// FinalStates are the states a delivery ends in: what a purge deletes.
var FinalStates = []State{Delivered, Failed}

// PurgeBound is the greatest id of a delivery that can have finished
// before before: a delivery finishes after its transition, whose time its
// id holds, so a walk of the deliveries in id order stops past it.
func PurgeBound(before time.Time) string {
	var bound ulid.ULID
	_ = bound.SetTime(ulid.Timestamp(before))
	for i := range bound[6:] {
		bound[6+i] = 0xff
	}
	return bound.String()
}

// DecidePurge picks, of found (final deliveries up to PurgeBound, in the
// order of FinalStates then id), those that finished before before, at
// most limit: what a purge deletes.
func DecidePurge(found []Delivery, before time.Time, limit int) []Delivery {
	var out []Delivery
	for _, d := range found {
		if len(out) == limit {
			break
		}
		if (d.State == Delivered || d.State == Failed) && d.FinishedAt.Before(before) {
			out = append(out, d)
		}
	}
	return out
}
