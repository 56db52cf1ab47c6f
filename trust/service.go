package trust

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/ratelimit"
)

// Board is what a page shows of the signals, read at Now: each item's
// signals and each author's reputation.
type Board struct {
	Now         time.Time
	Items       map[Item]Signals
	Reputations map[string]Reputation
	// Mine are the voter's standing votes (BoardQuery.Voter), by item.
	Mine map[Item]int
}

// Of is item's signals (a zero tally for an item without any).
func (b Board) Of(item Item) Signals {
	if s, ok := b.Items[item]; ok {
		return s
	}
	return Signals{Tally: Tally{Item: item}}
}

// Reputation is agentID's reputation (0 for one nothing counted for).
func (b Board) Reputation(agentID string) int64 { return b.Reputations[agentID].Points }

// Signals are an item's tally (zero counts when it has none) and its
// newest failed reports, newest first.
type Signals struct {
	Tally    Tally
	Failures []Verification
}

// Store persists votes, verifications, tallies and reputations, each
// command in one transaction with its change log events.
type Store interface {
	// Vote decides c under lim (DecideVote) on the state it names,
	// loaded under the agent's lock, then the reply's discussion's share
	// lock, then the item's tally's lock, and writes the outcome. A
	// refusal writes nothing. A record's existence is c.Record's (the
	// service read it: records change only by the operator's import).
	Vote(ctx context.Context, c VoteCommand, lim Limits) (VoteResult, error)
	// Verify is Vote for a verification (DecideVerify).
	Verify(ctx context.Context, c VerifyCommand, lim Limits) (VerifyResult, error)
	// ResetReputation decides c (DecideReset) on the agent's reputation,
	// read under the agent's lock, and writes the adjustment.
	ResetReputation(ctx context.Context, c Reset) (ResetOutcome, error)
	// VoteWindow reads agentID's vote window: the kept time of
	// Limits.Rate, zero when it never voted under a rate.
	VoteWindow(ctx context.Context, agentID string) (time.Time, error)
	// Board reads what q names in one snapshot.
	Board(ctx context.Context, q BoardQuery) (Board, error)
	// Profile reads agentID's profile (ProfileOf) with up to recent of
	// its newest posts (agents.ErrNotFound for no agent).
	Profile(ctx context.Context, agentID string, recent int) (Profile, error)
}

// RecordReader reads a record (knowledge.ErrNotFound for none).
type RecordReader interface {
	GetRecord(ctx context.Context, id string) (knowledge.Record, error)
}

// Bounds on the reads a caller shapes.
const (
	// MaxItems bounds the items one Signals read names.
	MaxItems = 100
	// MaxAgents bounds the agents one Reputations read names.
	MaxAgents = 200
	// ProfilePosts is how many recent posts a profile lists.
	ProfilePosts = 10
	// Failures is how many failed reports an answer shows.
	Failures = 3
)

// Service applies the trust rules over a Store.
type Service struct {
	store   Store
	records RecordReader
	limits  Limits
	now     func() time.Time
}

// NewService returns a Service under limits; records says whether a
// record exists.
func NewService(store Store, records RecordReader, limits Limits, now func() time.Time) *Service {
	return &Service{store: store, records: records, limits: limits, now: now}
}

func (s *Service) at() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// Agent is who votes or verifies.
type Agent struct {
	ID   string
	Name string
}

// Vote records agent's vote of value (1, -1, or 0 to withdraw) on item.
// A vote equal to the standing one changes nothing. Over the vote rate it
// is a *ratelimit.Exceeded; neither a refusal nor an unchanged vote
// writes anything or spends any budget.
func (s *Service) Vote(ctx context.Context, agent Agent, item Item, value int) (VoteResult, error) {
	if err := item.Validate(); err != nil {
		return VoteResult{}, err
	}
	if err := ValidateValue(value); err != nil {
		return VoteResult{}, err
	}
	c := VoteCommand{Item: item, AgentID: agent.ID, Value: value, At: s.at()}
	if err := s.recordExists(ctx, item, &c.Record); err != nil {
		return VoteResult{}, err
	}
	res, err := s.store.Vote(ctx, c, s.limits)
	return res, s.refusal("vote on", item, err)
}

// Verify records agent's report on item (see DecideVerify).
func (s *Service) Verify(ctx context.Context, agent Agent, item Item, outcome, environment, note string) (VerifyResult, error) {
	if err := item.Validate(); err != nil {
		return VerifyResult{}, err
	}
	o, err := ParseOutcome(outcome)
	if err != nil {
		return VerifyResult{}, err
	}
	if err := ValidateReport(environment, note); err != nil {
		return VerifyResult{}, err
	}
	c := VerifyCommand{Item: item, AgentID: agent.ID, AgentName: agent.Name, Outcome: o, Environment: environment, Note: note,
		At: s.at()}
	if err := s.recordExists(ctx, item, &c.Record); err != nil {
		return VerifyResult{}, err
	}
	res, err := s.store.Verify(ctx, c, s.limits)
	return res, s.refusal("verify", item, err)
}

// recordExists reads whether a record item exists into found.
func (s *Service) recordExists(ctx context.Context, item Item, found *bool) error {
	if item.Kind != ItemRecord {
		return nil
	}
	_, err := s.records.GetRecord(ctx, item.ID)
	switch {
	case errors.Is(err, knowledge.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("read record %s: %w", item.ID, err)
	}
	*found = true
	return nil
}

// refusal passes the decision's refusals on as they are (their words are
// the client's) and wraps the store's errors.
func (s *Service) refusal(what string, item Item, err error) error {
	var limited *ratelimit.Exceeded
	var nf *discussions.NotFoundError
	var rnf *discussions.ReplyNotFoundError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &limited):
		return limited
	case errors.As(err, &nf), errors.As(err, &rnf), errors.Is(err, knowledge.ErrNotFound), errors.Is(err, ErrOwnContent):
		return err
	}
	return fmt.Errorf("%s %s %s: %w", what, item.Kind, item.ID, err)
}

// QuotaVote names the vote rate in a ratelimit.Quota.
const QuotaVote = "vote"

// Quota reads where agentID stands against the vote rate now; limited is
// false when votes are not rate limited.
func (s *Service) Quota(ctx context.Context, agentID string) (q ratelimit.Quota, limited bool, err error) {
	if !s.limits.Rate.Enabled() {
		return q, false, nil
	}
	w, err := s.store.VoteWindow(ctx, agentID)
	if err != nil {
		return q, false, fmt.Errorf("vote quota: %w", err)
	}
	q, limited = s.limits.Rate.Quota(QuotaVote, w, s.now())
	return q, limited, nil
}

// Limits are the limits this service applies.
func (s *Service) Limits() Limits { return s.limits }

// BoardQuery names what a Board read reads: the Items' tallies with up
// to Failures of each one's newest failed reports, the Agents'
// reputations, and the standing votes of Voter ("" for none) on the
// items.
type BoardQuery struct {
	Items    []Item
	Failures int
	Agents   []string
	Voter    string
}

// Board reads what q names (at most MaxItems items and MaxAgents agents;
// repeats are read once; at most Failures failed reports each), at now.
func (s *Service) Board(ctx context.Context, q BoardQuery) (Board, error) {
	q.Items, q.Agents = uniq(q.Items), uniq(q.Agents)
	if len(q.Items) > MaxItems || len(q.Agents) > MaxAgents {
		return Board{}, fmt.Errorf("trust: %d items and %d agents in one read, at most %d and %d", len(q.Items), len(q.Agents),
			MaxItems, MaxAgents)
	}
	q.Failures = min(q.Failures, Failures)
	if q.Voter == "" || len(q.Items) == 0 {
		q.Voter = ""
	}
	b := Board{Now: s.now(), Items: map[Item]Signals{}, Reputations: map[string]Reputation{}, Mine: map[Item]int{}}
	if len(q.Items) == 0 && len(q.Agents) == 0 {
		return b, nil
	}
	read, err := s.store.Board(ctx, q)
	if err != nil {
		return Board{}, fmt.Errorf("trust: read signals: %w", err)
	}
	read.Now = b.Now
	return read, nil
}

// uniq is s without repeats (or empty strings), in first order.
func uniq[T comparable](s []T) []T {
	var zero T
	seen := make(map[T]bool, len(s))
	out := s[:0:0]
	for _, v := range s {
		if v != zero && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// Profile is agentID's public profile.
func (s *Service) Profile(ctx context.Context, agentID string) (Profile, error) {
	return s.store.Profile(ctx, agentID, ProfilePosts)
}

// Reset resets agentID's reputation to 0, for actor (a moderator or the
// operator), saying why; it answers the reputation it took away.
func (s *Service) Reset(ctx context.Context, c Reset) (int64, error) {
	if err := ValidateReason(c.Reason); err != nil {
		return 0, err
	}
	c.At = s.at()
	out, err := s.store.ResetReputation(ctx, c)
	if err != nil {
		return 0, fmt.Errorf("reset the reputation of %s: %w", c.AgentID, err)
	}
	return out.Before, nil
}
