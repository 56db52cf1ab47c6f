package service

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/events"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/tasks"
	"github.com/kfa-project/kfa/trust"
)

// Config is what the agent needs to know about the server it runs in.
type Config struct {
	// PublicURL is the externally visible base URL, without a trailing
	// slash; interface and discussion URLs are built from it.
	PublicURL string
	// Version is the build version, shown as the card's version.
	Version string
	// DocumentationURL is optional and shown on the card.
	DocumentationURL string
	// ContributorWrites enables ask-network.
	ContributorWrites bool
	// Streaming is true when SendStreamingMessage and SubscribeToTask work
	// (Deps.Events is set); the card says so.
	Streaming bool
	// MCPURL, when set, is the MCP endpoint serving the same knowledge
	// (search, fetch, get_changes, whoami); the card names it.
	MCPURL string
	// GRPCURL, when set, is where the A2A gRPC binding listens (host:port,
	// as gRPC clients dial it); the card lists it.
	GRPCURL string
	// PushNotifications is true when push notification configs work
	// (Deps.Push is set); the card says so.
	PushNotifications bool
	// OAuth, when set, says which OAuth providers' tokens the server
	// accepts; SetOAuth updates it as they are reached.
	OAuth *OAuth
}

// Searcher answers knowledge searches.
type Searcher interface {
	Search(ctx context.Context, q knowledge.Query) (knowledge.Result, error)
}

// Deps are the services the agent runs over.
type Deps struct {
	Tasks       *tasks.Service
	Discussions *discussions.Service
	// Moderation decides flags and moderators' actions; nil turns them
	// off (the calls answer UnsupportedOperation).
	Moderation *moderation.Service
	Search     Searcher
	// SearchRate limits searches per client address (per agent id when
	// authenticated). Nil means no limit.
	SearchRate *ratelimit.Limiter
	// Agents authenticates the callers' tokens (Authenticate) and tells
	// which names several agents share.
	Agents *agents.Service
	// Records are read by id and by the change feed (records.go).
	Records *knowledge.Service
	// Feed is the public change feed peers follow (changes.go); nil
	// answers Unavailable.
	Feed *peers.Feed
	// Peers are this server's peers: MCP's fetch reads what was followed
	// from them (records.go); nil: nothing was.
	Peers *peers.Service
	// Sessions are the web view's sign-in sessions (sessions.go); nil
	// without the web view.
	Sessions *sessions.Service
	// AuthFailures limits failed authentications per client address; nil
	// means no limit.
	AuthFailures *ratelimit.Limiter
	// RequestRate limits authenticated requests per agent (Authenticate
	// spends them), and the extended card tells what is left. Nil means
	// no limit.
	RequestRate *ratelimit.Limiter
	// Events carries committed task transitions to streams; nil disables
	// streaming.
	Events *events.Broker
	// Push manages push notification configs; nil turns push
	// notifications off (the card says so, and the config methods answer
	// PushNotificationNotSupportedError).
	Push *push.Service
	// Trust keeps votes, verifications, reputations and profiles; nil
	// turns them off (the calls answer UnsupportedOperation).
	Trust *trust.Service
	// Signer, when set, signs the agent card (SignedCard).
	Signer CardSigner
	// AccessTokens, when set, verifies the OAuth access tokens of the
	// configured providers: Authenticate takes them beside kfa tokens.
	AccessTokens AccessTokens
	// OAuth is what an access token's identity may do at its first visit.
	OAuth OAuthPolicy
	// WebSignIn, when set, lets people sign in to the web view with a
	// provider (oauth_signin.go).
	WebSignIn WebSignIn
	Now       func() time.Time
}

// Service is the A2A agent. It is safe for concurrent use.
type Service struct {
	cfg    Config
	deps   Deps
	skills skills
	// pub is the card and the documents made from it; pubMu serializes
	// their remaking (SetOAuth).
	pub   atomic.Pointer[published]
	pubMu sync.Mutex
}

// published is what the service shows as it is: the card and the
// documents made from it. It is remade only when what the card says
// changes (an OAuth provider is reached), and swapped whole, so that a
// reader never sees a card and documents of two different moments.
type published struct {
	card   Card // unsigned
	signed signedCards
	info   []byte
	guides guides
}

// New returns the agent for cfg over deps.
func New(cfg Config, deps Deps) (*Service, error) {
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if deps.Now == nil {
		deps.Now = time.Now
	}
	cfg.Streaming = deps.Events != nil
	cfg.PushNotifications = deps.Push != nil
	s := &Service{cfg: cfg, deps: deps, skills: newSkills(registry(cfg.ContributorWrites))}
	if err := s.publish(cfg.OAuth); err != nil {
		return nil, err
	}
	return s, nil
}

// publish makes the card and its documents for oauth and shows them.
func (s *Service) publish(oauth *OAuth) error {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	cfg := s.cfg
	cfg.OAuth = oauth
	card, err := buildCard(cfg, s.skills.enabled(), s.deps.Now())
	if err != nil {
		return fmt.Errorf("service: build agent card: %w", err)
	}
	info, err := buildInfo(cfg, card.Card, s.deps.Signer != nil)
	if err != nil {
		return fmt.Errorf("service: build info: %w", err)
	}
	g, err := s.buildGuides(cfg, card.Card)
	if err != nil {
		return err
	}
	s.pub.Store(&published{card: card, info: info, guides: g})
	return nil
}

// SetOAuth remakes the card and its documents for what the server now
// knows of its OAuth providers (the server calls it when one is reached).
// Their entity tags change with them, so clients that cache the card
// read it again.
func (s *Service) SetOAuth(o OAuth) error { return s.publish(&o) }

// Card returns the agent card, its JSON and its entity tag.
func (s *Service) Card() Card { return s.pub.Load().card }

// QuotaSearch names the search rate in a ratelimit.Quota.
const QuotaSearch = "search"

// requireAgent returns the caller's agent or an Unauthenticated error.
func requireAgent(c Caller, what string) (*agents.Agent, error) {
	if c.Agent == nil {
		return nil, a2a.MissingCredential("%s needs a bearer token (Authorization: Bearer kfa_...)", what)
	}
	return c.Agent, nil
}

func taskNotFound(id string) *a2a.Error {
	// The same error, byte for byte, whether the task is missing or
	// another agent's: only the echoed id differs.
	return a2a.Errorf(a2a.TaskNotFound, "task %s not found", id).With("taskId", id)
}

// GetTask returns the caller's task. historyLength nil shows all history.
func (s *Service) GetTask(ctx context.Context, c Caller, id string, historyLength *int) (a2a.Task, error) {
	ag, err := requireAgent(c, "GetTask")
	if err != nil {
		return a2a.Task{}, err
	}
	if err := checkHistoryLength(historyLength); err != nil {
		return a2a.Task{}, err
	}
	t, err := s.deps.Tasks.Get(ctx, ag.ID, id)
	if err != nil {
		return a2a.Task{}, s.taskError(id, err)
	}
	return t.Wire(tasks.View{HistoryLength: historyLength, IncludeArtifacts: true}), nil
}

// CancelTask cancels the caller's task.
func (s *Service) CancelTask(ctx context.Context, c Caller, id string) (a2a.Task, error) {
	ag, err := requireAgent(c, "CancelTask")
	if err != nil {
		return a2a.Task{}, err
	}
	t, _, err := s.deps.Tasks.Cancel(ctx, ag.ID, id)
	if err != nil {
		return a2a.Task{}, s.taskError(id, err)
	}
	return t.Wire(tasks.FullView), nil
}

// ListTasksRequest is ListTasks as read from any binding, values still as
// the client wrote them.
type ListTasksRequest struct {
	ContextID            string
	Status               string
	PageSize             *int
	PageToken            string
	HistoryLength        *int
	StatusTimestampAfter string
	IncludeArtifacts     bool
}

// listParams checks a ListTasks request.
func (s *Service) listParams(c Caller, req ListTasksRequest) (*agents.Agent, tasks.ListParams, tasks.View, error) {
	ag, err := requireAgent(c, "ListTasks")
	if err != nil {
		return nil, tasks.ListParams{}, tasks.View{}, err
	}
	p, err := taskFilter{ContextID: req.ContextID, State: req.Status, Since: req.StatusTimestampAfter,
		PageSize: req.PageSize, PageToken: req.PageToken, stateField: "status", sinceField: "statusTimestampAfter"}.params()
	if err != nil {
		return nil, p, tasks.View{}, err
	}
	if err := checkHistoryLength(req.HistoryLength); err != nil {
		return nil, p, tasks.View{}, err
	}
	return ag, p, tasks.View{HistoryLength: req.HistoryLength, IncludeArtifacts: req.IncludeArtifacts}, nil
}

// taskFilter is a task listing's filters as a client wrote them, with the
// names its surface gives the state and time filters (A2A: status and
// statusTimestampAfter; the admin API: state and since).
type taskFilter struct {
	ContextID, State, Since, PageToken string
	PageSize                           *int
	stateField, sinceField             string
}

// params checks f, for every listing of tasks (the page size is the
// domain's to check).
func (f taskFilter) params() (tasks.ListParams, error) {
	p := tasks.ListParams{ContextID: f.ContextID, PageSize: f.PageSize, PageToken: f.PageToken}
	if f.State != "" {
		st, ok := a2a.ParseTaskState(f.State)
		if !ok {
			return p, a2a.BadParam(f.stateField, "unknown task state %q (use a name such as TASK_STATE_WORKING)", truncate(f.State, 32))
		}
		p.State = st
	}
	if f.Since != "" {
		t, err := a2a.ParseTime(f.Since)
		if err != nil {
			return p, a2a.BadParam(f.sinceField, "%q is not an ISO 8601 timestamp such as 2026-12-02T10:30:00.000Z", truncate(f.Since, 64))
		}
		p.Since = t
	}
	if len(f.ContextID) > tasks.MaxContextIDLen {
		return p, a2a.BadParam("contextId", "longer than %d bytes", tasks.MaxContextIDLen)
	}
	return p, nil
}

// checkHistoryLength refuses a negative historyLength (nil shows all).
func checkHistoryLength(n *int) error {
	if n != nil && *n < 0 {
		return a2a.BadParam("historyLength", "must not be negative")
	}
	return nil
}

// taskError maps the task errors that name a task.
func (s *Service) taskError(id string, err error) error { return namedTaskError(id, err) }

// namedTaskError names the task in the errors of an operation on it, for
// the agent and the operator alike.
func namedTaskError(id string, err error) error {
	switch {
	case isNotFound(err):
		return taskNotFound(id)
	case isErr(err, tasks.ErrNotCancelable):
		return a2a.Errorf(a2a.TaskNotCancelable, "task %s is completed; a completed task cannot be canceled", id).With("taskId", id)
	}
	return err
}
