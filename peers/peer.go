package peers

import (
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/kfa-project/kfa/input"
)

// State is a peer's state as the operator sees it.
type State string

// The states of a peer: everything works; the last pass or forward
// failed (retried with backoff, the error kept); the operator paused it.
const (
	StateOK      State = "ok"
	StateFailing State = "failing"
	StatePaused  State = "paused"
)

// Errors of the peer commands.
var (
	// ErrNotFound is a name no peer has (a *NotFoundError).
	ErrNotFound = errors.New("peer not found")
	// ErrExists refuses adding a peer under a name a peer has.
	ErrExists = errors.New("a peer has this name already")
	// ErrCardKey refuses a peer's card signed by another key than the one
	// pinned when it was added.
	ErrCardKey = errors.New("the peer's agent card is signed by another key than the one pinned when it was added")
	// ErrNoDocument is a key no followed document has.
	ErrNoDocument = errors.New("no followed document has this id")
	// ErrTooManyPeers refuses a peer past MaxPeers.
	ErrTooManyPeers = errors.New("this server has as many peers as it may keep")
	// ErrLeaseLost is a follower pass whose lease another process took,
	// or whose cursor moved: it writes nothing.
	ErrLeaseLost = errors.New("another follower pass of this peer ran meanwhile")
)

// NotFoundError is ErrNotFound naming the peer.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string { return "no peer named " + e.Name }

// Is makes errors.Is(err, ErrNotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Bounds are a peer's volume bounds: a peer past one is failing, with
// the reason.
type Bounds struct {
	// DocsPerMinute is how many documents its feed may bring a minute.
	DocsPerMinute int `json:"docsPerMinute"`
	// MaxDocBytes bounds one document's text (a record's fields, a
	// thread's question and replies), in bytes.
	MaxDocBytes int `json:"maxDocBytes"`
}

// DefaultBounds are the bounds of a peer added without any.
var DefaultBounds = Bounds{DocsPerMinute: 60_000, MaxDocBytes: 256 << 10}

// Limits on what a peer command names.
const (
	MaxNameLen  = 32
	MaxURLLen   = 2048
	MaxTokenLen = 4096
	// maxDocsPerMinute and maxDocBytes bound the bounds an operator sets.
	maxDocsPerMinute = 10_000_000
	maxDocBytes      = 16 << 20
)

// Peer is another kfa this server follows or forwards asks to, under a
// name of its operator's choosing.
type Peer struct {
	Name string `json:"name"`
	// URL is the peer's base URL, as NormalizeURL writes it.
	URL string `json:"url"`
	// Token is the credential of this server's agent on the peer: read to
	// follow, post too to forward asks. It is never shown.
	Token string `json:"token"`
	// AgentName is the name the peer's agent card gives.
	AgentName string `json:"agentName"`
	// A2AURL is the peer's A2A HTTP+JSON interface, from its card.
	A2AURL string `json:"a2aUrl"`
	// Server is the peer's public URL as its feed names it: the origin of
	// every document of its feed that names none ("" before the first
	// page).
	Server string `json:"server,omitempty"`
	// KeyID and Key are the signing key pinned from its signed card: the
	// key's id and its RFC 7638 thumbprint (SHA-256, base64url); empty
	// when the card was not signed.
	KeyID string `json:"keyId,omitempty"`
	Key   string `json:"key,omitempty"`
	// Follow says its feed is followed; ForwardAsks, that the discussions
	// opened here are asked there too.
	Follow      bool      `json:"follow"`
	ForwardAsks bool      `json:"forwardAsks"`
	Paused      bool      `json:"paused,omitempty"`
	Bounds      Bounds    `json:"bounds"`
	AddedAt     time.Time `json:"addedAt"`

	// The follower's state: its cursor in the peer's feed, when it last
	// read a page and last read to the feed's end, its minute of volume,
	// and the lease of the pass under way.
	Cursor     string    `json:"cursor,omitempty"`
	LastSync   time.Time `json:"lastSync,omitzero"`
	CaughtUpAt time.Time `json:"caughtUpAt,omitzero"`
	Window     time.Time `json:"window,omitzero"`
	WindowDocs int       `json:"windowDocs,omitempty"`
	Lease      string    `json:"lease,omitempty"`
	LeaseUntil time.Time `json:"leaseUntil,omitzero"`

	// Follower and Forwarder are the two jobs' failures.
	Follower  Health `json:"follower"`
	Forwarder Health `json:"forwarder"`
	// LastError and LastErrorAt are the latest failure of either job,
	// kept after it recovers.
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	// Purging says the peer was removed with --purge: its documents are
	// being deleted, and the peer's row goes with the last of them.
	Purging bool `json:"purging,omitempty"`
}

// Health is one job's failures: how many in a row, and when it tries
// again.
type Health struct {
	Failures int       `json:"failures,omitempty"`
	RetryAt  time.Time `json:"retryAt,omitzero"`
}

// State is the peer's state.
func (p Peer) State() State {
	switch {
	case p.Paused:
		return StatePaused
	case p.Follower.Failures > 0 || p.Forwarder.Failures > 0:
		return StateFailing
	}
	return StateOK
}

// Lag is how far the follower is behind the peer's feed at now: the time
// since a pass last read to its end (since the peer was added, before
// the first). Zero when it does not follow.
func (p Peer) Lag(now time.Time) time.Duration {
	if !p.Follow {
		return 0
	}
	since := p.CaughtUpAt
	if since.IsZero() {
		since = p.AddedAt
	}
	if d := now.Sub(since); d > 0 {
		return d
	}
	return 0
}

// AddInput is what the operator gives to add a peer.
type AddInput struct {
	Name        string
	URL         string
	Token       string
	Follow      bool
	ForwardAsks bool
	// Bounds, zero fields for the defaults.
	Bounds Bounds
}

// Card is what this server read of the peer's agent card when it was
// added: its name, its A2A interface, and the key that signed it.
type Card struct {
	Name   string
	A2AURL string
	// KeyID and Key (a public JWK) when the card is signed.
	KeyID string
	Key   string
}

// ValidateName checks a peer's name: 1 to MaxNameLen lower-case letters,
// digits and '-', starting with a letter (it is shown as "name@peer").
func ValidateName(name string) error {
	if name == "" {
		return input.Errorf("name", "is required")
	}
	if len(name) > MaxNameLen {
		return input.Errorf("name", "%d bytes, at most %d", len(name), MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '-')) {
			return input.Errorf("name", "use lower-case letters, digits and '-', starting with a letter")
		}
	}
	return nil
}

// NormalizeURL checks a server's base URL (http or https, a host, no
// user, query or fragment) and writes it in one form: the scheme and
// host in lower case, no trailing slash. Two URLs of one server compare
// equal in that form.
func NormalizeURL(field, s string) (string, error) {
	if s == "" {
		return "", input.Errorf(field, "is required")
	}
	if len(s) > MaxURLLen {
		return "", input.Errorf(field, "%d bytes, at most %d", len(s), MaxURLLen)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return "", input.Errorf(field, "must be an http or https URL, like https://kfa.example.org")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", input.Errorf(field, "must have no user, query or fragment")
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return strings.TrimRight(u.String(), "/"), nil
}

// SameServer reports whether a and b name one server (NormalizeURL's
// form of each; false when either is not a URL).
func SameServer(a, b string) bool {
	na, err1 := NormalizeURL("url", a)
	nb, err2 := NormalizeURL("url", b)
	return err1 == nil && err2 == nil && na == nb
}

// validateBounds fills b's zero fields with the defaults and checks them.
func validateBounds(b Bounds) (Bounds, error) {
	if b.DocsPerMinute == 0 {
		b.DocsPerMinute = DefaultBounds.DocsPerMinute
	}
	if b.MaxDocBytes == 0 {
		b.MaxDocBytes = DefaultBounds.MaxDocBytes
	}
	if b.DocsPerMinute < 1 || b.DocsPerMinute > maxDocsPerMinute {
		return b, input.Errorf("maxDocsPerMinute", "must be from 1 to %d", maxDocsPerMinute)
	}
	if b.MaxDocBytes < 1024 || b.MaxDocBytes > maxDocBytes {
		return b, input.Errorf("maxDocBytes", "must be from 1024 to %d", maxDocBytes)
	}
	return b, nil
}

// ValidateAdd checks what the operator gave, before the card is fetched.
func ValidateAdd(in AddInput) (AddInput, error) {
	if err := ValidateName(in.Name); err != nil {
		return in, err
	}
	u, err := NormalizeURL("url", in.URL)
	if err != nil {
		return in, err
	}
	in.URL = u
	if err := input.Text("token", in.Token, 1, MaxTokenLen, false); err != nil {
		return in, err
	}
	if strings.ContainsAny(in.Token, " \t\r\n") {
		return in, input.Errorf("token", "must not contain spaces")
	}
	if !in.Follow && !in.ForwardAsks {
		return in, input.Errorf("follow", "a peer that is neither followed nor asked does nothing: keep --follow, or add --forward-asks")
	}
	if in.Bounds, err = validateBounds(in.Bounds); err != nil {
		return in, err
	}
	return in, nil
}

// Bounds of one page of a peer's feed as the follower reads it.
const (
	// MaxPageBytes bounds the memory one page of a peer's feed takes:
	// whatever its bounds, a peer never makes the follower read more in
	// one answer (but one document of its bound, when that is bigger).
	MaxPageBytes = 32 << 20
	// entryBytes is what an entry takes besides its text (ids, URLs,
	// times, names); jsonEscape, how much JSON's escaping (\u003c) may
	// grow a text.
	entryBytes = 8 << 10
	jsonEscape = 6
)

// PageLimit is the body limit of a page of size entries of a peer with
// bounds b: room for size documents of its bound as JSON, at most
// MaxPageBytes, at least one document's room.
func PageLimit(size int, b Bounds) int64 {
	per := jsonEscape*int64(b.MaxDocBytes) + entryBytes
	return max(min(int64(max(size, 1))*per, MaxPageBytes), per)
}
