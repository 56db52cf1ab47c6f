package agents

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Scope is a permission a credential's agent holds.
type Scope string

// The scopes. Post implies read: an agent that may ask may also read what
// it asked. Moderate (hide and unhide content from the web view, read the
// review queue) implies read too, and nothing else.
const (
	ScopeRead     Scope = "read"
	ScopePost     Scope = "post"
	ScopeModerate Scope = "moderate"
)

// knownScopes are the scopes in canonical order.
var knownScopes = []Scope{ScopeRead, ScopePost, ScopeModerate}

// MaxNameLen bounds an agent name, in characters.
const MaxNameLen = 64

// Sentinel errors. Callers match them with errors.Is.
var (
	ErrNotFound     = errors.New("agent not found")
	ErrDisabled     = errors.New("agent is disabled")
	ErrInvalidName  = errors.New("invalid agent name")
	ErrInvalidScope = errors.New("invalid scope")
	ErrInvalidToken = errors.New("invalid or revoked token")
)

// ErrRevoked refuses a command of an agent that was revoked after its
// request was authenticated: every command an agent makes loads the
// agent under the lock it takes (MayAct), so a revoke that committed
// first is seen, and nothing of the agent commits after it. It is an
// ErrInvalidToken: the caller gets what a request sent a moment later
// gets, 401 with error="invalid_token" (RFC 6750 §3.1 names a revoked
// token so), since its credential no longer exists.
var ErrRevoked = fmt.Errorf("%w: the agent was revoked while the request was in flight", ErrInvalidToken)

// MayAct is the first check of every command an agent makes (an ask, a
// reply, a cancel, a flag...): nil when a, the agent as the command
// loaded it under its lock (nil when no agent has the id), is active;
// ErrRevoked otherwise.
func MayAct(a *Agent) error {
	if a == nil || !a.Active() {
		return ErrRevoked
	}
	return nil
}

// Agent is an identity. Tasks and inbox entries belong to an agent id, never
// to a token, so rotating a token keeps everything the agent owns.
type Agent struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Scopes     []Scope   `json:"scopes"`
	CreatedAt  time.Time `json:"createdAt"`
	DisabledAt time.Time `json:"disabledAt,omitzero"`
	// Issuer and Subject are the OAuth identity the agent is linked to
	// (see Identity); both empty when it has none.
	Issuer  string `json:"issuer,omitempty"`
	Subject string `json:"subject,omitempty"`
	// Moved records that an operator moved this revoked agent's identity
	// to another agent (kfa agent link --replace): the agent's own audit
	// of it, kept with it for good. nil for every other agent.
	Moved *IdentityMove `json:"identityMoved,omitempty"`
}

// IdentityMove is an identity that left a revoked agent for another:
// which, to whom, when, and by whom.
type IdentityMove struct {
	Issuer  string    `json:"issuer"`
	Subject string    `json:"subject"`
	To      string    `json:"to"`
	At      time.Time `json:"at"`
	By      string    `json:"by,omitempty"`
}

// Active reports whether the agent may authenticate.
func (a Agent) Active() bool { return a.DisabledAt.IsZero() }

// Has reports whether the agent holds scope s (post implies read).
func (a Agent) Has(s Scope) bool {
	if slices.Contains(a.Scopes, s) {
		return true
	}
	return s == ScopeRead && (slices.Contains(a.Scopes, ScopePost) || slices.Contains(a.Scopes, ScopeModerate))
}

// ScopeError refuses an agent an action it holds no scope for.
type ScopeError struct {
	Agent Agent  // the agent refused
	Need  Scope  // the scope the action needs
	What  string // the action, as the refusal names it ("replying", "ask-network")
}

func (e *ScopeError) Error() string {
	return fmt.Sprintf("%s needs the %s scope; agent %s (%s) has the scopes %s",
		e.What, e.Need, e.Agent.ID, e.Agent.Name, strings.Join(e.Agent.ScopeStrings(), ","))
}

// Permit is the scope check of every action, on every surface: nil when
// the agent holds need, a *ScopeError naming what it was refused
// otherwise.
func (a Agent) Permit(need Scope, what string) error {
	if a.Has(need) {
		return nil
	}
	return &ScopeError{Agent: a, Need: need, What: what}
}

// ScopeStrings returns the scopes as strings, in canonical order.
func (a Agent) ScopeStrings() []string {
	out := make([]string, len(a.Scopes))
	for i, s := range a.Scopes {
		out[i] = string(s)
	}
	return out
}

// ValidateName checks an agent name: 1 to MaxNameLen printable characters.
func ValidateName(name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidName)
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("%w: must not be empty", ErrInvalidName)
	case n > MaxNameLen:
		return fmt.Errorf("%w: %d characters, at most %d", ErrInvalidName, n, MaxNameLen)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%w: contains the non-printable character %U", ErrInvalidName, r)
		}
	}
	return nil
}

// ParseScopes reads a comma-separated scope list ("read,post"). The result
// is deduplicated and in canonical order (read, post, moderate).
func ParseScopes(list string) ([]Scope, error) {
	have := map[Scope]bool{}
	for _, f := range strings.Split(list, ",") {
		sc := Scope(strings.TrimSpace(f))
		switch {
		case sc == "":
			continue
		case !slices.Contains(knownScopes, sc):
			return nil, fmt.Errorf("%w: %q (want read, post or moderate)", ErrInvalidScope, sc)
		}
		have[sc] = true
	}
	var out []Scope
	for _, sc := range knownScopes {
		if have[sc] {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: at least one of read, post, moderate is needed", ErrInvalidScope)
	}
	return out, nil
}

// KnownScope reports whether s is a scope kfa has.
func KnownScope(s Scope) bool { return slices.Contains(knownScopes, s) }
