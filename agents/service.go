package agents

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/input"
)

// Store persists agents and credentials. Each method is one transaction.
type Store interface {
	// CreateAgent decides c (DecideCreate), under a lock on its name, and
	// stores the agent with its first credential.
	CreateAgent(ctx context.Context, c Create) error
	// GetAgent returns the agent or ErrNotFound.
	GetAgent(ctx context.Context, id string) (Agent, error)
	// ListAgents returns at most limit agents after the agent id after
	// ("" for the first page), oldest first.
	ListAgents(ctx context.Context, after string, limit int) (Page, error)
	// RotateCredential adds c for its agent, as DecideRotate decides under
	// the agent's lock: older credentials are deleted, or, when keepUntil
	// is not zero, kept until then.
	RotateCredential(ctx context.Context, c Credential, keepUntil time.Time) (Agent, error)
	// RevokeAgent disables the agent at the given time and deletes all of
	// its credentials, as DecideRevoke decides under the agent's lock.
	RevokeAgent(ctx context.Context, id string, at time.Time) (Agent, error)
	// AgentsNamed returns, for each of names in order, the ids of at most
	// limit agents (active or not) whose name has its NameKey, in id
	// order: one read, however many names a page shows.
	AgentsNamed(ctx context.Context, names []string, limit int) ([][]string, error)
	// Authenticate finds the credential with digest d and its agent, or
	// returns ErrInvalidToken.
	Authenticate(ctx context.Context, d Digest) (Agent, Credential, error)
	// AgentByIdentity returns the agent linked to id, active or not, or
	// ErrNotLinked.
	AgentByIdentity(ctx context.Context, id Identity) (Agent, error)
	// LinkAgent decides l (DecideLink) under the locks of its identity,
	// its agent and the agent the identity is linked to, and stores what
	// it decided.
	LinkAgent(ctx context.Context, l Link) (LinkOutcome, error)
	// ProvisionAgent decides p (DecideProvision) under the locks of its
	// identity and of its names, and stores the agent it creates, linked.
	// It answers the agent the identity has, and whether it was created.
	ProvisionAgent(ctx context.Context, p Provision) (Agent, bool, error)
}

// Service applies the agent rules over a Store.
type Service struct {
	store Store
	now   func() time.Time
	cache *CredCache // nil: every Authenticate reads the store
}

// NewService returns a Service. now is the clock (time.Now in production).
func NewService(store Store, now func() time.Time) *Service {
	return &Service{store: store, now: now}
}

// UseCache makes Authenticate answer from c when it can, and Rotate and
// Revoke drop the agent's answers from c before they return. Call it
// before the service is used.
func (s *Service) UseCache(c *CredCache) { s.cache = c }

// dropCached forgets agent id's cached credentials.
func (s *Service) dropCached(id string) {
	if s.cache != nil {
		s.cache.Drop(id)
	}
}

// Created is a new agent together with its token, which is shown once.
type Created struct {
	Agent Agent
	Token string
}

// NewAgent is what an agent is created with.
type NewAgent struct {
	Name   string
	Scopes []Scope
	// AllowDuplicateName lets the agent share its name with another.
	// Without it a name another agent has (NameKey) is refused with a
	// *DuplicateNameError: readers tell agents apart by their names.
	AllowDuplicateName bool
}

// Create makes an agent with the given name and scopes and its first
// token. A name another agent has is refused (see NewAgent).
func (s *Service) Create(ctx context.Context, name string, scopes []Scope) (Created, error) {
	return s.CreateAgent(ctx, NewAgent{Name: name, Scopes: scopes})
}

// CreateAgent makes agent n and its first token.
func (s *Service) CreateAgent(ctx context.Context, n NewAgent) (Created, error) {
	name, scopes := n.Name, n.Scopes
	if err := ValidateName(name); err != nil {
		return Created{}, err
	}
	if len(scopes) == 0 {
		return Created{}, fmt.Errorf("%w: at least one of read, post, moderate is needed", ErrInvalidScope)
	}
	for _, sc := range scopes {
		if !KnownScope(sc) {
			return Created{}, fmt.Errorf("%w: %q", ErrInvalidScope, sc)
		}
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	a := Agent{ID: ulid.Make().String(), Name: name, Scopes: scopes, CreatedAt: now}
	token := NewToken()
	c := Credential{Digest: DigestOf(token), AgentID: a.ID, CreatedAt: now}
	if err := s.store.CreateAgent(ctx, Create{Agent: a, Credential: c, AllowDuplicateName: n.AllowDuplicateName}); err != nil {
		return Created{}, fmt.Errorf("create agent: %w", err)
	}
	return Created{Agent: a, Token: token}, nil
}

// Rotate issues a new token for the agent. The old tokens stop working at
// once, or after grace when grace > 0. The agent id, and so everything the
// agent owns, stays the same.
func (s *Service) Rotate(ctx context.Context, id string, grace time.Duration) (Created, error) {
	if grace < 0 {
		return Created{}, errors.New("rotate: grace period must not be negative")
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	token := NewToken()
	c := Credential{Digest: DigestOf(token), AgentID: id, CreatedAt: now}
	var keepUntil time.Time
	if grace > 0 {
		keepUntil = now.Add(grace)
	}
	a, err := s.store.RotateCredential(ctx, c, keepUntil)
	s.dropCached(id)
	if err != nil {
		return Created{}, fmt.Errorf("rotate agent %s: %w", id, err)
	}
	return Created{Agent: a, Token: token}, nil
}

// Revoke disables the agent and deletes its credentials: the next request
// with any of its tokens fails.
func (s *Service) Revoke(ctx context.Context, id string) (Agent, error) {
	a, err := s.store.RevokeAgent(ctx, id, s.now().UTC().Truncate(time.Millisecond))
	s.dropCached(id)
	if err != nil {
		return Agent{}, fmt.Errorf("revoke agent %s: %w", id, err)
	}
	return a, nil
}

// MaxNameShares bounds the agents SharedNames looks at per name.
const MaxNameShares = 2

// SharedNames says which of names more than one agent has (NameKey), so
// that a page showing them can tell those agents apart, in one read of
// the store.
func (s *Service) SharedNames(ctx context.Context, names []string) (map[string]bool, error) {
	out := make(map[string]bool, len(names))
	var distinct []string
	for _, n := range names {
		if _, done := out[n]; !done {
			out[n] = false
			distinct = append(distinct, n)
		}
	}
	if len(distinct) == 0 {
		return out, nil
	}
	ids, err := s.store.AgentsNamed(ctx, distinct, MaxNameShares)
	if err != nil {
		return nil, fmt.Errorf("agents named: %w", err)
	}
	if len(ids) != len(distinct) {
		return nil, fmt.Errorf("agents named: %d answers for %d names", len(ids), len(distinct))
	}
	for i, n := range distinct {
		out[n] = len(ids[i]) >= MaxNameShares
	}
	return out, nil
}

// Get returns one agent.
func (s *Service) Get(ctx context.Context, id string) (Agent, error) {
	a, err := s.store.GetAgent(ctx, id)
	if err != nil {
		return Agent{}, fmt.Errorf("get agent %s: %w", id, err)
	}
	return a, nil
}

// Page sizes of List.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// Page is one page of agents.
type Page struct {
	Agents []Agent
	Next   string // the id to list after for the next page; "" on the last
	Total  int    // every agent
}

// List returns one page of agents, oldest first (DefaultPageSize of them
// when pageSize is nil). The page token is the id of the last agent of
// the previous page: agents are the operator's to see, so it needs no
// signature.
func (s *Service) List(ctx context.Context, asked *int, pageToken string) (Page, error) {
	pageSize, err := input.PageSize(asked, DefaultPageSize, MaxPageSize)
	if err != nil {
		return Page{}, err
	}
	if pageToken != "" {
		if _, err := ulid.ParseStrict(pageToken); err != nil {
			return Page{}, input.Errorf("pageToken", "not a page token of the agent list")
		}
	}
	p, err := s.store.ListAgents(ctx, pageToken, pageSize)
	if err != nil {
		return Page{}, fmt.Errorf("list agents: %w", err)
	}
	return p, nil
}

// Authenticate returns the active agent that token belongs to, or
// ErrInvalidToken. Malformed tokens are refused without a lookup.
func (s *Service) Authenticate(ctx context.Context, token string) (Agent, error) {
	if !WellFormed(token) {
		return Agent{}, ErrInvalidToken
	}
	a, c, err := s.authenticate(ctx, DigestOf(token))
	if err != nil {
		return Agent{}, err
	}
	if !a.Active() || !c.ValidAt(s.now()) {
		return Agent{}, ErrInvalidToken
	}
	return a, nil
}

// authenticate looks d up in the cache, then in the store.
func (s *Service) authenticate(ctx context.Context, d Digest) (Agent, Credential, error) {
	if s.cache == nil {
		return s.store.Authenticate(ctx, d)
	}
	e, gen, ok := s.cache.get(d)
	if ok {
		return e.agent, e.cred, nil
	}
	a, c, err := s.store.Authenticate(ctx, d)
	if err == nil {
		s.cache.put(d, credEntry{agent: a, cred: c}, gen)
	}
	return a, c, err
}

// Link links agent id to identity ident: the identity's tokens act as
// the agent from then on. Linking it again is no error; an identity
// linked to another agent, or an agent linked to another identity, is a
// *LinkConflictError.
func (s *Service) Link(ctx context.Context, id string, ident Identity) (Agent, error) {
	out, err := s.LinkAs(ctx, Link{AgentID: id, Identity: ident})
	return out.Agent, err
}

// LinkAs decides l (its At is now): Link, and, with l.Replace, the move
// of an identity from its revoked agent to l.AgentID (see DecideLink).
// The moved identity's tokens act as the new agent at once on this
// process, and on the others when they read the log.
func (s *Service) LinkAs(ctx context.Context, l Link) (LinkOutcome, error) {
	if err := ValidateIdentity(l.Identity); err != nil {
		return LinkOutcome{}, err
	}
	l.At = s.now().UTC().Truncate(time.Millisecond)
	out, err := s.store.LinkAgent(ctx, l)
	if err != nil {
		return LinkOutcome{}, fmt.Errorf("link agent %s: %w", l.AgentID, err)
	}
	if out.Replaced != nil {
		// The cache may hold the identity's answer: the revoked agent.
		s.dropCached(out.Replaced.ID)
	}
	return out, nil
}

// ProvisionScopes are the scopes of an agent created for an identity:
// all of them, since each token's own scopes bound what it may do.
var ProvisionScopes = []Scope{ScopeRead, ScopePost}

// ResolveIdentity returns the agent that a verified token of identity
// ident acts as (DecideResolve): the agent linked to it, or, with
// autoProvision, a new agent linked to it, named from nameHint (see
// ProvisionNames), when none is. It answers ErrNotLinked for an identity
// without an agent (autoProvision off) and ErrDisabled for one whose
// agent was revoked. Concurrent first tokens of one identity, on any
// process, make one agent.
func (s *Service) ResolveIdentity(ctx context.Context, ident Identity, nameHint string, autoProvision bool) (Agent, error) {
	if err := ValidateIdentity(ident); err != nil {
		return Agent{}, err
	}
	linked, err := s.agentByIdentity(ctx, ident)
	if err != nil && !errors.Is(err, ErrNotLinked) {
		return Agent{}, fmt.Errorf("agent of %s: %w", ident, err)
	}
	var found *Agent
	if err == nil {
		found = &linked
	}
	a, create, err := DecideResolve(found, autoProvision)
	if err != nil || !create {
		return a, err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	a, _, err = s.store.ProvisionAgent(ctx, Provision{
		Identity: ident,
		Agent:    Agent{ID: ulid.Make().String(), Scopes: ProvisionScopes, CreatedAt: now},
		Names:    ProvisionNames(nameHint, ident),
	})
	if err != nil {
		return Agent{}, fmt.Errorf("create the agent of %s: %w", ident, err)
	}
	return a, nil
}

// identityDigest is the credential cache's key for an identity: no
// token's digest, since a token's preimage never holds a zero byte.
func identityDigest(id Identity) Digest {
	return DigestOf("kfa oauth identity\x00" + id.Issuer + "\x00" + id.Subject)
}

// agentByIdentity looks the identity's agent up in the credential cache,
// then in the store. A revocation drops it from the cache like the
// agent's tokens.
func (s *Service) agentByIdentity(ctx context.Context, id Identity) (Agent, error) {
	if s.cache == nil {
		return s.store.AgentByIdentity(ctx, id)
	}
	d := identityDigest(id)
	e, gen, ok := s.cache.get(d)
	if ok {
		return e.agent, nil
	}
	a, err := s.store.AgentByIdentity(ctx, id)
	if err == nil {
		s.cache.put(d, credEntry{agent: a}, gen)
	}
	return a, err
}
