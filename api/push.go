package api

import (
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/signing"
)

// Delivery is one push notification in the outbox, as the operator sees
// it: where it goes (scheme, host and port only: a URL's path or query
// may be a secret, and the token and credentials always are), its state
// and its attempts.
type Delivery struct {
	ID          string `json:"id"` // the jti of its signed requests
	TaskID      string `json:"taskId"`
	ConfigID    string `json:"configId"`
	OwnerID     string `json:"ownerId"`
	Destination string `json:"destination"`
	State       string `json:"state"` // pending, delivered or failed
	CreatedAt   string `json:"createdAt"`
	// NextAttemptAt is when a pending delivery is tried next.
	NextAttemptAt string `json:"nextAttemptAt,omitempty"`
	Attempts      int    `json:"attempts"`
	FinishedAt    string `json:"finishedAt,omitempty"`
	// Reason says why a failed delivery failed.
	Reason         string            `json:"reason,omitempty"`
	RecentAttempts []DeliveryAttempt `json:"recentAttempts"`
}

// DeliveryAttempt is one attempt of a delivery.
type DeliveryAttempt struct {
	At         string  `json:"at"`
	DurationMs float64 `json:"durationMs"`
	Status     int     `json:"status,omitempty"`
	Error      string  `json:"error,omitempty"`
	Outcome    string  `json:"outcome"`
	NextAt     string  `json:"nextAt,omitempty"`
}

// FromDelivery converts a delivery.
func FromDelivery(d push.Delivery) Delivery {
	out := Delivery{ID: d.ID, TaskID: d.TaskID, ConfigID: d.ConfigID, OwnerID: d.OwnerID, Destination: d.Destination,
		State: string(d.State), CreatedAt: ts(d.CreatedAt), NextAttemptAt: ts(d.NextAt), Attempts: d.Attempts,
		FinishedAt: ts(d.FinishedAt), Reason: d.Reason, RecentAttempts: make([]DeliveryAttempt, len(d.Recent))}
	for i, a := range d.Recent {
		out.RecentAttempts[i] = DeliveryAttempt{At: ts(a.At), DurationMs: float64(a.Duration.Microseconds()) / 1000,
			Status: a.Status, Error: a.Error, Outcome: string(a.Outcome), NextAt: ts(a.NextAt)}
	}
	return out
}

// DeliveryList is a page of deliveries, newest first.
type DeliveryList struct {
	Deliveries    []Delivery `json:"deliveries"`
	NextPageToken string     `json:"nextPageToken"`
}

// SigningKey describes a signing key, never its private part.
type SigningKey struct {
	ID        string `json:"id"` // the kid of the JWS it signs
	Algorithm string `json:"algorithm"`
	CreatedAt string `json:"createdAt"`
	Current   bool   `json:"current"`
	// RetiredAt is when a newer key replaced it; ExpiresAt, when it
	// leaves the JWKS.
	RetiredAt string `json:"retiredAt,omitempty"`
	ExpiresAt string `json:"expiresAt,omitempty"`
}

// FromKey converts a key description.
func FromKey(k signing.KeyInfo) SigningKey {
	return SigningKey{ID: k.ID, Algorithm: k.Algorithm, CreatedAt: ts(k.CreatedAt), Current: k.Current,
		RetiredAt: ts(k.RetiredAt), ExpiresAt: ts(k.ExpiresAt)}
}

// SigningKeyList lists the signing keys, newest first.
type SigningKeyList struct {
	Keys []SigningKey `json:"keys"`
}
