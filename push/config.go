package push

import (
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/input"
)

// Bounds on configs.
const (
	// MaxConfigsPerTask is how many push configs one task holds.
	MaxConfigsPerTask = 10
	// MaxURLBytes bounds a config's URL.
	MaxURLBytes = 2048
	// MaxIDBytes bounds a client-chosen config id.
	MaxIDBytes = 64
	// MaxTokenBytes bounds the notification token.
	MaxTokenBytes = 1024
	// MaxSchemeBytes bounds the authentication scheme.
	MaxSchemeBytes = 64
	// MaxCredentialsBytes bounds the authentication credentials.
	MaxCredentialsBytes = 4096
)

// Sentinel errors of the config store and service.
var (
	// ErrTaskNotFound is a task that does not exist or is another agent's:
	// the two are the same answer.
	ErrTaskNotFound = errors.New("task not found")
	// ErrNotFound is a config the task does not have.
	ErrNotFound = errors.New("push notification config not found")
	// ErrTaskTerminal refuses a config for a task that will never change
	// again, so would never be notified.
	ErrTaskTerminal = errors.New("task is in a terminal state")
	// ErrTooManyConfigs refuses a config beyond MaxConfigsPerTask.
	ErrTooManyConfigs = errors.New("too many push notification configs on the task")
)

// Config is one push notification config of a task. Token and
// AuthCredentials are secrets: they are sent to the receiver and never
// shown anywhere else (Wire leaves the credentials out).
type Config struct {
	ID              string
	TaskID          string
	OwnerID         string
	URL             string
	Token           string // sent as X-A2A-Notification-Token when set
	AuthScheme      string // "Authorization: <AuthScheme> <AuthCredentials>" when set
	AuthCredentials string
	CreatedAt       time.Time
}

// Wire is the config as the A2A methods answer it. The credentials are
// write-only: the answer names the scheme but never carries them.
func (c Config) Wire() a2a.TaskPushNotificationConfig {
	w := a2a.TaskPushNotificationConfig{ID: c.ID, TaskID: c.TaskID, URL: c.URL, Token: c.Token}
	if c.AuthScheme != "" {
		w.Authentication = &a2a.PushAuthentication{Scheme: c.AuthScheme}
	}
	return w
}

// validID reports whether id is safe as a path segment: letters, digits
// and - _ . ~ (UUIDs and ULIDs are).
func validID(id string) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == '~':
		default:
			return false
		}
	}
	return id != "" && id != "." && id != ".."
}

// headerSafe checks a value that goes into an HTTP header: visible ASCII
// and spaces only, so it can neither break the header nor smuggle another.
func headerSafe(field, v string, max int) error {
	if len(v) > max {
		return input.Errorf(field, "%d bytes, at most %d", len(v), max)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return input.Errorf(field, "may hold visible ASCII characters and spaces only (it is sent in an HTTP header)")
		}
	}
	return nil
}

// isToken reports whether s is an RFC 9110 token (an auth scheme name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c < 0x80 && c != 0 && containsByte("!#$%&'*+-.^_`|~", c):
		default:
			return false
		}
	}
	return true
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// NewConfig checks a config as a client sent it, under policy, and
// returns it with its id (minted at now when the client chose none). The
// task and owner are the caller's to fill in. field prefixes the names of
// bad fields ("configuration.taskPushNotificationConfig." inline).
func NewConfig(in a2a.TaskPushNotificationConfig, policy Policy, field string, now time.Time) (Config, error) {
	c := Config{ID: in.ID, URL: in.URL, Token: in.Token, CreatedAt: now.UTC().Truncate(time.Millisecond)}
	if c.ID != "" {
		if len(c.ID) > MaxIDBytes || !validID(c.ID) {
			return Config{}, input.Errorf(field+"id", "must be 1 to %d letters, digits, '-', '_', '.' or '~'", MaxIDBytes)
		}
	} else {
		c.ID = ulid.MustNew(ulid.Timestamp(now), ulid.DefaultEntropy()).String()
	}
	if c.URL == "" {
		return Config{}, input.Errorf(field+"url", "is required")
	}
	if len(c.URL) > MaxURLBytes {
		return Config{}, input.Errorf(field+"url", "%d bytes, at most %d", len(c.URL), MaxURLBytes)
	}
	if _, err := policy.CheckURL(c.URL); err != nil {
		return Config{}, input.Errorf(field+"url", "%v", err)
	}
	if err := headerSafe(field+"token", c.Token, MaxTokenBytes); err != nil {
		return Config{}, err
	}
	if a := in.Authentication; a != nil {
		if a.Scheme == "" && a.Credentials == "" {
			return c, nil // an empty authentication object: none
		}
		if len(a.Scheme) > MaxSchemeBytes || !isToken(a.Scheme) {
			return Config{}, input.Errorf(field+"authentication.scheme",
				"must be an HTTP authentication scheme name such as Bearer or Basic (at most %d characters)", MaxSchemeBytes)
		}
		if err := headerSafe(field+"authentication.credentials", a.Credentials, MaxCredentialsBytes); err != nil {
			return Config{}, err
		}
		c.AuthScheme, c.AuthCredentials = a.Scheme, a.Credentials
	}
	return c, nil
}

// TooManyError says which bound a refused config hit.
func TooManyError(taskID string) error {
	return fmt.Errorf("%w: task %s already has %d, the most one task takes; delete one first",
		ErrTooManyConfigs, taskID, MaxConfigsPerTask)
}
