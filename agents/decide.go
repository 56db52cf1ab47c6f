package agents

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kfa-project/kfa/changelog"
)

// The decisions of the agent commands. Each is pure: it takes what the
// store loaded (and locked) and returns a refusal or the effects for the
// store to write.

// ErrDuplicateName is the reason of an agent refused because another
// agent has its name (a *DuplicateNameError).
var ErrDuplicateName = errors.New("an agent with this name exists")

// DuplicateNameError refuses a name another agent has.
type DuplicateNameError struct {
	Name string
	ID   string // the agent that has it
}

func (e *DuplicateNameError) Error() string {
	return fmt.Sprintf("agent %s is named %q already; pick another name, or allow the duplicate (--allow-duplicate-name)", e.ID, e.Name)
}

// Is makes errors.Is(err, ErrDuplicateName) hold.
func (e *DuplicateNameError) Is(target error) bool { return target == ErrDuplicateName }

// NameKey is the form in which two names are the same name: without
// surrounding spaces, in one case. Readers tell agents apart by name, so
// "Alice" and "alice " are one name to them.
func NameKey(name string) string {
	return strings.ToLower(strings.ToUpper(strings.TrimSpace(name)))
}

// Create is the command that creates an agent: the agent and its first
// credential, made before the transaction.
type Create struct {
	Agent      Agent
	Credential Credential
	// AllowDuplicateName lets the agent share its name with another.
	AllowDuplicateName bool
}

// CreateOutcome is what a create writes.
type CreateOutcome struct {
	Agent      Agent
	Credential Credential
	Events     []changelog.Event
}

// DecideCreate decides c, given the ids of the agents (active or not)
// whose name has c's NameKey: a *DuplicateNameError unless c allows it.
func DecideCreate(sameName []string, c Create) (CreateOutcome, error) {
	if len(sameName) > 0 && !c.AllowDuplicateName {
		return CreateOutcome{}, &DuplicateNameError{Name: c.Agent.Name, ID: sameName[0]}
	}
	return CreateOutcome{
		Agent: c.Agent, Credential: c.Credential,
		Events: []changelog.Event{{Kind: changelog.AgentCreated, ID: c.Agent.ID, At: c.Agent.CreatedAt}},
	}, nil
}

// CredentialState is an agent as a credential command finds it: nil when
// no agent has the id, and its live credentials.
type CredentialState struct {
	Agent       *Agent
	Credentials []Credential
}

// RotateOutcome is what a rotation writes.
type RotateOutcome struct {
	Agent Agent
	// Delete are the digests of the credentials that end now.
	Delete []Digest
	// Keep are the credentials kept for the grace period, with their new
	// expiry.
	Keep []Credential
	// Add is the new credential.
	Add    Credential
	Events []changelog.Event
}

// DecideRotate decides adding credential c to its agent (at
// c.CreatedAt). The older credentials end at once or, when keepUntil is
// not zero, at keepUntil (or earlier, if they expired earlier anyway); one
// already expired ends now. An unknown agent is ErrNotFound, a revoked
// one ErrDisabled.
func DecideRotate(st CredentialState, c Credential, keepUntil time.Time) (RotateOutcome, error) {
	switch {
	case st.Agent == nil:
		return RotateOutcome{}, ErrNotFound
	case !st.Agent.Active():
		return RotateOutcome{}, ErrDisabled
	}
	out := RotateOutcome{Agent: *st.Agent, Add: c}
	for _, old := range st.Credentials {
		if keepUntil.IsZero() || !old.ValidAt(c.CreatedAt) {
			out.Delete = append(out.Delete, old.Digest)
			continue
		}
		if old.ExpiresAt.IsZero() || old.ExpiresAt.After(keepUntil) {
			old.ExpiresAt = keepUntil
		}
		out.Keep = append(out.Keep, old)
	}
	e := changelog.Event{Kind: changelog.AgentRotated, ID: st.Agent.ID, At: c.CreatedAt}
	if !keepUntil.IsZero() {
		e.Ref = keepUntil.UTC().Format(time.RFC3339Nano)
	}
	out.Events = []changelog.Event{e}
	return out, nil
}

// RevokeOutcome is what a revocation writes.
type RevokeOutcome struct {
	// Agent is the agent after (as found when Changed is false).
	Agent Agent
	// Changed is false for an agent revoked already: nothing to write.
	Changed bool
	// Delete are the digests of its credentials, all of which end.
	Delete []Digest
	Events []changelog.Event
}

// DecideRevoke decides disabling the agent at at and deleting all of its
// credentials. Revoking a revoked agent changes nothing; an unknown one is
// ErrNotFound.
func DecideRevoke(st CredentialState, at time.Time) (RevokeOutcome, error) {
	if st.Agent == nil {
		return RevokeOutcome{}, ErrNotFound
	}
	a := *st.Agent
	if !a.Active() {
		return RevokeOutcome{Agent: a}, nil
	}
	a.DisabledAt = at
	out := RevokeOutcome{Agent: a, Changed: true,
		Events: []changelog.Event{{Kind: changelog.AgentRevoked, ID: a.ID, At: at}}}
	for _, c := range st.Credentials {
		out.Delete = append(out.Delete, c.Digest)
	}
	return out, nil
}
