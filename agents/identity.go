package agents

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kfa-project/kfa/changelog"
)

// Identity is who an OAuth access token speaks for: its issuer and its
// subject (the token's iss and sub). One identity is one agent, always
// the same, so the tasks of a client or a person stay theirs across
// tokens. The pair is compared exactly: byte for byte, no case folding.
type Identity struct {
	Issuer  string `json:"issuer"`
	Subject string `json:"subject"`
}

// String is the identity as people read it: "SUBJECT at ISSUER".
func (id Identity) String() string { return fmt.Sprintf("%q at %s", id.Subject, id.Issuer) }

// Bounds of an identity, in bytes. OpenID Connect bounds a subject to
// 255 ASCII characters; providers that use other characters stay well
// inside 1024 bytes.
const (
	MaxIssuerLen  = 1024
	MaxSubjectLen = 1024
)

// Sentinel errors of identities. Callers match them with errors.Is.
var (
	ErrInvalidIdentity = errors.New("invalid identity")
	// ErrNotLinked refuses an identity no agent is linked to, where
	// agents are not created for new identities.
	ErrNotLinked = errors.New("no agent is linked to this identity")
	// ErrLinkConflict refuses a link that would give an identity two
	// agents, or an agent two identities (a *LinkConflictError).
	ErrLinkConflict = errors.New("link conflict")
)

// LinkConflictError refuses a link: the identity belongs to another
// agent, or the agent to another identity. Links never move on their
// own, so that a token can never start acting as another agent; the one
// move there is, an operator's (Link.Replace), takes the identity from a
// revoked agent only.
type LinkConflictError struct {
	Identity Identity
	AgentID  string // the agent the link was asked for
	// Other is the agent the identity is linked to, when that is the
	// conflict, OtherRevoked whether it is revoked, and Replace whether
	// the link asked to move the identity; otherwise Has is the identity
	// the agent is linked to.
	Other        string
	OtherRevoked bool
	Replace      bool
	Has          Identity
}

func (e *LinkConflictError) Error() string {
	switch {
	case e.Other != "" && e.Replace:
		return fmt.Sprintf("the identity %s is linked to agent %s, which is active: --replace moves only the identity of a revoked agent; "+
			"revoke %s first (kfa agent revoke %s), which ends its tokens and sessions", e.Identity, e.Other, e.Other, e.Other)
	case e.Other != "" && e.OtherRevoked:
		return fmt.Sprintf("the identity %s is linked to agent %s, which is revoked; to give it a new agent, link it again with --replace "+
			"(kfa agent link %s --issuer %s --subject %s --replace): %s stays revoked", e.Identity, e.Other, e.AgentID,
			e.Identity.Issuer, e.Identity.Subject, e.Other)
	case e.Other != "":
		return fmt.Sprintf("the identity %s is linked to agent %s already; an identity is one agent", e.Identity, e.Other)
	}
	return fmt.Sprintf("agent %s is linked to the identity %s already; an agent has one identity", e.AgentID, e.Has)
}

// Is makes errors.Is(err, ErrLinkConflict) hold.
func (e *LinkConflictError) Is(target error) bool { return target == ErrLinkConflict }

// ValidateIdentity checks an identity: an absolute http(s) issuer URL
// without query or fragment, and a subject of printable characters,
// each within its bound.
func ValidateIdentity(id Identity) error {
	switch {
	case id.Issuer == "":
		return fmt.Errorf("%w: the issuer is empty", ErrInvalidIdentity)
	case len(id.Issuer) > MaxIssuerLen:
		return fmt.Errorf("%w: the issuer is %d bytes, at most %d", ErrInvalidIdentity, len(id.Issuer), MaxIssuerLen)
	case id.Subject == "":
		return fmt.Errorf("%w: the subject is empty", ErrInvalidIdentity)
	case len(id.Subject) > MaxSubjectLen:
		return fmt.Errorf("%w: the subject is %d bytes, at most %d", ErrInvalidIdentity, len(id.Subject), MaxSubjectLen)
	case !utf8.ValidString(id.Subject) || !utf8.ValidString(id.Issuer):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidIdentity)
	}
	u, err := url.Parse(id.Issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%w: the issuer %q is not an absolute http(s) URL without query or fragment", ErrInvalidIdentity, id.Issuer)
	}
	for _, r := range id.Subject {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%w: the subject contains the non-printable character %U", ErrInvalidIdentity, r)
		}
	}
	return nil
}

// Linked reports whether the agent is linked to an identity.
func (a Agent) Linked() bool { return a.Issuer != "" }

// Identity is the identity the agent is linked to (zero when none).
func (a Agent) Identity() Identity { return Identity{Issuer: a.Issuer, Subject: a.Subject} }

// Link is the command that links agent AgentID to Identity at At: from
// then on the identity's tokens act as the agent.
type Link struct {
	AgentID  string
	Identity Identity
	At       time.Time
	// Replace moves the identity to AgentID from the agent it is linked
	// to, when that agent is revoked: the operator's way back for a
	// person or client whose agent was revoked (kfa agent link
	// --replace). The revoked agent stays revoked, and its tokens dead.
	Replace bool
	// By is who moved it, for the revoked agent's record (Agent.Moved).
	By string
}

// LinkState is what a link decides on: the agent (nil when no agent has
// the id) and the agent the identity is linked to (nil when none), both
// as they are under the command's locks.
type LinkState struct {
	Agent  *Agent
	Linked *Agent
}

// LinkOutcome is what a link writes.
type LinkOutcome struct {
	Agent Agent
	// Changed is false for a link that exists already: nothing to write.
	Changed bool
	// Replaced is the revoked agent the identity moved from (Replace),
	// as it is after: no identity, and Moved saying where it went; nil
	// when the identity moved from none.
	Replaced *Agent
	Events   []changelog.Event
}

// DecideLink decides l. An unknown agent is ErrNotFound, a revoked one
// ErrDisabled; an agent linked to another identity is a
// *LinkConflictError, and so is an identity linked to another agent,
// unless l.Replace and that agent is revoked: then the identity moves,
// and the revoked agent keeps a record of it. The same link again
// changes nothing.
func DecideLink(st LinkState, l Link) (LinkOutcome, error) {
	if err := ValidateIdentity(l.Identity); err != nil {
		return LinkOutcome{}, err
	}
	switch {
	case st.Agent == nil:
		return LinkOutcome{}, ErrNotFound
	case !st.Agent.Active():
		return LinkOutcome{}, ErrDisabled
	case st.Linked != nil && st.Linked.ID == st.Agent.ID:
		return LinkOutcome{Agent: *st.Agent}, nil
	case st.Agent.Linked() && st.Agent.Identity() != l.Identity:
		return LinkOutcome{}, &LinkConflictError{Identity: l.Identity, AgentID: st.Agent.ID, Has: st.Agent.Identity()}
	case st.Linked != nil && (!l.Replace || st.Linked.Active()):
		return LinkOutcome{}, &LinkConflictError{Identity: l.Identity, AgentID: st.Agent.ID, Other: st.Linked.ID,
			OtherRevoked: !st.Linked.Active(), Replace: l.Replace && st.Linked.Active()}
	}
	a := *st.Agent
	a.Issuer, a.Subject = l.Identity.Issuer, l.Identity.Subject
	out := LinkOutcome{Agent: a, Changed: true}
	if st.Linked != nil {
		old := *st.Linked
		old.Issuer, old.Subject = "", ""
		old.Moved = &IdentityMove{Issuer: l.Identity.Issuer, Subject: l.Identity.Subject, To: a.ID, At: l.At, By: l.By}
		out.Replaced = &old
		out.Events = append(out.Events, changelog.Event{Kind: changelog.AgentUnlinked, ID: old.ID, Ref: l.Identity.Issuer,
			Note: l.Identity.Subject, At: l.At})
	}
	out.Events = append(out.Events, linkedEvent(a, l.At))
	return out, nil
}

// linkedEvent is the log's record of a link.
func linkedEvent(a Agent, at time.Time) changelog.Event {
	return changelog.Event{Kind: changelog.AgentLinked, ID: a.ID, Ref: a.Issuer, Note: a.Subject, At: at}
}

// DecideResolve decides what a verified token of an identity acts as,
// from the agent linked to it (nil when none): that agent while it is
// active (a revoked one is ErrDisabled: revoking refuses the identity's
// tokens for good); with none linked, a new agent when autoProvision is
// on (create), ErrNotLinked otherwise.
func DecideResolve(linked *Agent, autoProvision bool) (a Agent, create bool, err error) {
	switch {
	case linked != nil && !linked.Active():
		return Agent{}, false, ErrDisabled
	case linked != nil:
		return *linked, false, nil
	case autoProvision:
		return Agent{}, true, nil
	}
	return Agent{}, false, ErrNotLinked
}

// Provision is the command that creates the agent of an identity that
// has none, on its first valid token. Agent holds what is made before
// the transaction (the id, the scopes, the creation time); the decision
// names it and links it.
type Provision struct {
	Identity Identity
	Agent    Agent
	// Names are the names to give the agent, preferred first
	// (ProvisionNames): the first that no agent has, or the last one.
	Names []string
}

// ProvisionState is what a provisioning decides on: the agent linked to
// the identity by now (nil when none; a concurrent first token may have
// made it), and, for each of the command's Names, whether an agent has
// it.
type ProvisionState struct {
	Linked    *Agent
	NameTaken []bool
}

// ProvisionOutcome is what a provisioning writes.
type ProvisionOutcome struct {
	Agent Agent
	// Created is false when an agent was linked already: nothing to
	// write, and Agent is that agent.
	Created bool
	Events  []changelog.Event
}

// DecideProvision decides p: the agent linked by now, if any (refused as
// ErrDisabled when revoked), or a new agent under the first of p.Names
// no agent has, linked to the identity. A name is never shared (as
// DecideCreate refuses a duplicate): when every one is taken, which the
// identity's own names (ProvisionNames) make next to impossible, it is
// refused as ErrDuplicateName, and an operator names and links an agent.
func DecideProvision(st ProvisionState, p Provision) (ProvisionOutcome, error) {
	if err := ValidateIdentity(p.Identity); err != nil {
		return ProvisionOutcome{}, err
	}
	if st.Linked != nil {
		if !st.Linked.Active() {
			return ProvisionOutcome{}, ErrDisabled
		}
		return ProvisionOutcome{Agent: *st.Linked}, nil
	}
	if len(p.Names) == 0 || len(st.NameTaken) != len(p.Names) {
		return ProvisionOutcome{}, fmt.Errorf("%w: no name to give the agent", ErrInvalidName)
	}
	a := p.Agent
	for i, n := range p.Names {
		if !st.NameTaken[i] {
			a.Name = n
			break
		}
	}
	if a.Name == "" {
		return ProvisionOutcome{}, fmt.Errorf("%w: every name the agent of %s may take is another agent's, up to %q",
			ErrDuplicateName, p.Identity, p.Names[len(p.Names)-1])
	}
	if err := ValidateName(a.Name); err != nil {
		return ProvisionOutcome{}, err
	}
	a.Issuer, a.Subject = p.Identity.Issuer, p.Identity.Subject
	return ProvisionOutcome{Agent: a, Created: true, Events: []changelog.Event{
		{Kind: changelog.AgentCreated, ID: a.ID, At: a.CreatedAt},
		linkedEvent(a, a.CreatedAt),
	}}, nil
}

// ProvisionNames are the names a new agent of identity id may take,
// preferred first: the token's name hint (its preferred_username,
// client_id or, failing both, the subject) made a valid name; that name
// qualified by the issuer's host, "name (host)", which another issuer's
// agent of the same name does not have; then the identity's own, with 8
// and then 16 hex digits of the hash of (issuer, subject), "name (host,
// 3f9a1c2e)", which tells apart the identities of one name at one issuer
// (each client whose tokens say "alice") and is the same for an identity
// every time. No two agents share a name (DecideProvision).
func ProvisionNames(hint string, id Identity) []string {
	sum := sha256.Sum256([]byte(id.Issuer + "\x00" + id.Subject))
	own := hex.EncodeToString(sum[:8])
	base := cleanName(hint)
	if base == "" {
		base = cleanName(id.Subject)
	}
	if base == "" {
		base = "oauth-" + own[:8]
	}
	host := id.Issuer
	if u, err := url.Parse(id.Issuer); err == nil && u.Host != "" {
		host = u.Hostname()
	}
	host = truncateRunes(cleanName(host), MaxNameLen/2)
	names := []string{base}
	for _, suffix := range []string{" (" + host + ")", " (" + host + ", " + own[:8] + ")", " (" + host + ", " + own + ")"} {
		n := truncateRunes(base, MaxNameLen-utf8.RuneCountInString(suffix)) + suffix
		if !slices.ContainsFunc(names, func(m string) bool { return NameKey(m) == NameKey(n) }) {
			names = append(names, n)
		}
	}
	return names
}

// cleanName makes s a valid agent name: printable characters only, runs
// of spaces as one, at most MaxNameLen characters ("" when nothing is
// left).
func cleanName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "") {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			r = ' '
		}
		b.WriteRune(r)
	}
	return truncateRunes(strings.Join(strings.Fields(b.String()), " "), MaxNameLen)
}

// truncateRunes cuts s to at most n characters, without trailing space.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n]))
}
