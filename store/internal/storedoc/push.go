// Package storedoc holds the documents that every kfa backend stores in
// the same form (a push config, a delivery and its attempts), so the
// bbolt and PostgreSQL stores encode them with one piece of code and a
// document moves between them unchanged. Times are Unix milliseconds, 0
// for none.
package storedoc

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/push"
)

type pushConfig struct {
	ID              string `json:"id"`
	TaskID          string `json:"task"`
	OwnerID         string `json:"owner"`
	URL             string `json:"url"`
	Token           string `json:"token,omitempty"`
	AuthScheme      string `json:"scheme,omitempty"`
	AuthCredentials string `json:"cred,omitempty"`
	CreatedAt       int64  `json:"created"`
}

// EncodePushConfig is c's stored document.
func EncodePushConfig(c *push.Config) ([]byte, error) {
	return json.Marshal(pushConfig{ID: c.ID, TaskID: c.TaskID, OwnerID: c.OwnerID, URL: c.URL, Token: c.Token,
		AuthScheme: c.AuthScheme, AuthCredentials: c.AuthCredentials, CreatedAt: c.CreatedAt.UnixMilli()})
}

// DecodePushConfig reads a document EncodePushConfig wrote.
func DecodePushConfig(v []byte) (push.Config, error) {
	var r pushConfig
	if err := json.Unmarshal(v, &r); err != nil {
		return push.Config{}, fmt.Errorf("decode push config: %w", err)
	}
	return push.Config{ID: r.ID, TaskID: r.TaskID, OwnerID: r.OwnerID, URL: r.URL, Token: r.Token,
		AuthScheme: r.AuthScheme, AuthCredentials: r.AuthCredentials, CreatedAt: FromMS(r.CreatedAt)}, nil
}

type delivery struct {
	ID          string          `json:"id"`
	TaskID      string          `json:"task"`
	ConfigID    string          `json:"config"`
	OwnerID     string          `json:"owner"`
	Destination string          `json:"dest"`
	State       push.State      `json:"state"`
	Event       json.RawMessage `json:"event"`
	CreatedAt   int64           `json:"created"`
	NextAt      int64           `json:"next,omitempty"`
	Attempts    int             `json:"attempts,omitempty"`
	Recent      []attempt       `json:"recent,omitempty"`
	FinishedAt  int64           `json:"finished,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	RetriedAt   int64           `json:"retried,omitempty"`
}

type attempt struct {
	At      int64        `json:"at"`
	Micros  int64        `json:"us"`
	Status  int          `json:"status,omitempty"`
	Error   string       `json:"err,omitempty"`
	Outcome push.Outcome `json:"outcome"`
	NextAt  int64        `json:"next,omitempty"`
}

// EncodeDelivery is d's stored document.
func EncodeDelivery(d *push.Delivery) ([]byte, error) {
	r := delivery{ID: d.ID, TaskID: d.TaskID, ConfigID: d.ConfigID, OwnerID: d.OwnerID, Destination: d.Destination,
		State: d.State, Event: d.Event, CreatedAt: d.CreatedAt.UnixMilli(), NextAt: MSOrZero(d.NextAt), Attempts: d.Attempts,
		FinishedAt: MSOrZero(d.FinishedAt), Reason: d.Reason, RetriedAt: MSOrZero(d.RetriedAt)}
	for _, a := range d.Recent {
		r.Recent = append(r.Recent, attempt{At: a.At.UnixMilli(), Micros: a.Duration.Microseconds(), Status: a.Status,
			Error: a.Error, Outcome: a.Outcome, NextAt: MSOrZero(a.NextAt)})
	}
	return json.Marshal(r)
}

// DecodeDelivery reads a document EncodeDelivery wrote.
func DecodeDelivery(v []byte) (push.Delivery, error) {
	var r delivery
	if err := json.Unmarshal(v, &r); err != nil {
		return push.Delivery{}, fmt.Errorf("decode delivery: %w", err)
	}
	d := push.Delivery{ID: r.ID, TaskID: r.TaskID, ConfigID: r.ConfigID, OwnerID: r.OwnerID, Destination: r.Destination,
		State: r.State, Event: r.Event, CreatedAt: FromMS(r.CreatedAt), NextAt: TimeOrZero(r.NextAt),
		Attempts: r.Attempts, FinishedAt: TimeOrZero(r.FinishedAt), Reason: r.Reason, RetriedAt: TimeOrZero(r.RetriedAt)}
	for _, a := range r.Recent {
		d.Recent = append(d.Recent, push.Attempt{At: FromMS(a.At), Duration: time.Duration(a.Micros) * time.Microsecond,
			Status: a.Status, Error: a.Error, Outcome: a.Outcome, NextAt: TimeOrZero(a.NextAt)})
	}
	return d, nil
}

// FromMS is the UTC time of Unix milliseconds ms.
func FromMS(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// MSOrZero is t in Unix milliseconds, 0 for the zero time.
func MSOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// TimeOrZero is the inverse of MSOrZero.
func TimeOrZero(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return FromMS(ms)
}
