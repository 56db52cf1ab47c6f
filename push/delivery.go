package push

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/internal/english"
)

// State is where a delivery is in its life.
type State string

// The states of a delivery. A delivery is pending from the transition
// that wrote it until it is delivered or failed; both are final.
const (
	Pending   State = "pending"
	Delivered State = "delivered"
	Failed    State = "failed"
)

// Outcome is what one attempt decided.
type Outcome string

// The outcomes of an attempt.
const (
	// OutcomeDelivered: the receiver answered 2xx.
	OutcomeDelivered Outcome = "delivered"
	// OutcomeRetry: a temporary failure (408, 429, 5xx, a timeout, a
	// connection error); the delivery is tried again at NextAt.
	OutcomeRetry Outcome = "retry"
	// OutcomeFailed: a permanent failure (another 4xx, a redirect, a
	// refused destination), or the retry time is used up.
	OutcomeFailed Outcome = "failed"
)

// MaxRecentAttempts is how many attempts a delivery keeps the details of
// (the count of all of them is kept too).
const MaxRecentAttempts = 20

// Attempt is one try at delivering. Error never holds secrets: it names
// the destination's host, never its credentials or token.
type Attempt struct {
	// N numbers the attempt among its delivery's (1 for the first). It
	// makes recording idempotent: an attempt whose number the delivery has
	// counted already is recorded (see Recorded). Zero: not numbered.
	N        int
	At       time.Time
	Duration time.Duration
	Status   int // the HTTP status; 0 when no response came
	Error    string
	Outcome  Outcome
	NextAt   time.Time // for OutcomeRetry: when the next attempt is due
}

// Delivery is one notification to one config: the StreamResponse a
// transition of a task leaves for each of the task's configs. Its ID is
// the jti of the signed request, the same on every attempt.
type Delivery struct {
	ID          string
	TaskID      string
	ConfigID    string
	OwnerID     string
	Destination string // scheme://host:port of the config's URL when written
	State       State
	// Event is the JSON body: a StreamResponse {"statusUpdate": {...}}.
	Event     json.RawMessage
	CreatedAt time.Time // the transition's time
	NextAt    time.Time // when the next attempt is due (pending only)
	Attempts  int       // attempts made
	// Recent holds the last MaxRecentAttempts attempts, oldest first.
	Recent     []Attempt
	FinishedAt time.Time // when it was delivered or failed
	// Reason says why a failed delivery failed.
	Reason string
	// RetriedAt is when the operator last retried it (kfa push retry);
	// its retry period starts again there. Zero when never.
	RetriedAt time.Time
}

// RetryFrom is when the delivery's retry period started: its transition,
// or the operator's last retry.
func (d *Delivery) RetryFrom() time.Time {
	if d.RetriedAt.After(d.CreatedAt) {
		return d.RetriedAt
	}
	return d.CreatedAt
}

// Recorded tells whether d has counted attempt a already: a record tried
// again after its first try's COMMIT went unanswered (the database went
// away), which committed after all. Recording it again would count one
// attempt twice.
func (d *Delivery) Recorded(a Attempt) bool { return a.N > 0 && d.Attempts >= a.N }

// Apply records attempt a on d: the state it leads to, the schedule, the
// bounded history.
func (d *Delivery) Apply(a Attempt) {
	d.Attempts++
	d.Recent = append(d.Recent, a)
	if n := len(d.Recent) - MaxRecentAttempts; n > 0 {
		d.Recent = append(d.Recent[:0], d.Recent[n:]...)
	}
	switch a.Outcome {
	case OutcomeDelivered:
		d.State, d.FinishedAt, d.NextAt, d.Reason = Delivered, a.At, time.Time{}, ""
	case OutcomeFailed:
		d.State, d.FinishedAt, d.NextAt, d.Reason = Failed, a.At, time.Time{}, a.Error
	default:
		d.State, d.NextAt = Pending, a.NextAt
	}
}

// Errors of the outbox store.
var (
	// ErrDeliveryNotFound is a delivery id the outbox does not hold.
	ErrDeliveryNotFound = errors.New("delivery not found")
	// ErrNotPending refuses to record an attempt on a delivery that is no
	// longer pending (its config was deleted meanwhile, or it was purged).
	ErrNotPending = errors.New("delivery is not pending")
	// ErrNotFailed refuses an operator retry of a delivery that has not
	// failed.
	ErrNotFailed = errors.New("only a failed delivery can be retried")
)

// RetryPolicy is how long and how often a delivery is retried.
type RetryPolicy struct {
	// First is the gap before the first retry; each later gap doubles, up
	// to Cap, and is jittered into [gap/2, gap). Default 2s.
	First time.Duration
	// Cap bounds a gap. Default 1h.
	Cap time.Duration
	// For is how long after its transition a delivery may still be
	// retried; then it fails. Default 24h.
	For time.Duration
}

// Defaults of RetryPolicy.
const (
	DefaultFirstRetry = 2 * time.Second
	DefaultRetryCap   = time.Hour
	DefaultRetryFor   = 24 * time.Hour
)

// WithDefaults fills zero fields.
func (p RetryPolicy) WithDefaults() RetryPolicy {
	if p.First <= 0 {
		p.First = DefaultFirstRetry
	}
	if p.Cap <= 0 {
		p.Cap = DefaultRetryCap
	}
	if p.For <= 0 {
		p.For = DefaultRetryFor
	}
	return p
}

// Gap is the wait after the n'th failed attempt (n >= 1): First doubled
// n-1 times, capped, then jittered into [gap/2, gap) by jitter, which
// returns a number in [0, max). Gaps never shrink: the n+1'th is at
// least the n'th, since [g, 2g) starts where [g/2, g) ends.
func (p RetryPolicy) Gap(n int, jitter func(max int64) int64) time.Duration {
	g := p.First
	for i := 1; i < n && g < p.Cap; i++ {
		g *= 2
	}
	g = min(g, p.Cap)
	half := g / 2
	if half <= 0 {
		return g
	}
	return half + time.Duration(jitter(int64(g-half)))
}

// Response is what one attempt got: a status (and its Retry-After), or
// an error before any status came. Refused marks an error that no retry
// can fix (a destination the policy refuses).
type Response struct {
	Status     int
	RetryAfter time.Duration // from a 429 or 503 answer; 0 when none
	Err        error
	Refused    bool
}

// Decide turns the n'th attempt (n >= 1) of a delivery created at
// created, made at at, into an Attempt: delivered on 2xx; retried after
// a growing gap (or Retry-After when longer) on 408, 429, 5xx and errors;
// failed on anything else, on a refused destination, or when the next
// attempt would fall after created + p.For.
func (p RetryPolicy) Decide(r Response, n int, created, at time.Time, took time.Duration, jitter func(int64) int64) Attempt {
	p = p.WithDefaults()
	a := Attempt{N: n, At: at, Duration: took, Status: r.Status}
	switch {
	case r.Err != nil:
		a.Error = r.Err.Error()
		if r.Refused {
			a.Outcome = OutcomeFailed
			return a
		}
	case r.Status >= 200 && r.Status <= 299:
		a.Outcome = OutcomeDelivered
		return a
	case r.Status == 408 || r.Status == 429 || r.Status >= 500 && r.Status <= 599:
		a.Error = fmt.Sprintf("the receiver answered %d", r.Status)
	case r.Status >= 300 && r.Status <= 399:
		a.Error = fmt.Sprintf("the receiver answered %d, a redirect; redirects are not followed", r.Status)
		a.Outcome = OutcomeFailed
		return a
	default:
		a.Error = fmt.Sprintf("the receiver answered %d", r.Status)
		a.Outcome = OutcomeFailed
		return a
	}
	wait := max(p.Gap(n, jitter), r.RetryAfter)
	next := at.Add(wait)
	if deadline := created.Add(p.For); next.After(deadline) {
		a.Outcome = OutcomeFailed
		a.Error += fmt.Sprintf("; gave up after %s over %s (--push-retry-for)", english.Count(n, "attempt", "attempts"), p.For)
		return a
	}
	a.Outcome, a.NextAt = OutcomeRetry, next
	return a
}
