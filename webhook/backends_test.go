package webhook_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/store/transfer"
	"github.com/kfa-project/kfa/webhook"
)

// outbox is what a worker and its signer need of a store.
type outbox interface {
	push.OutboxStore
	signing.Store
}

// backend opens n stores over one new database holding d, as n processes
// would (bbolt: one, its file being one process's).
type backend struct {
	name string
	open func(t *testing.T, d *transfer.Data, n int) []outbox
}

var backends = []backend{
	{"bbolt", func(t *testing.T, d *transfer.Data, n int) []outbox {
		if n != 1 {
			t.Fatal("a bbolt file is one process's")
		}
		path := filepath.Join(t.TempDir(), store.FileName)
		if err := store.LoadFile(path, d); err != nil {
			t.Fatal(err)
		}
		db, err := store.Open(path, store.Options{BatchDelay: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return []outbox{db}
	}},
	{"postgres", func(t *testing.T, d *transfer.Data, n int) []outbox {
		url := pgtest.URL(t)
		var out []outbox
		for i := range n {
			db, err := postgres.Open(context.Background(), url, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			if i == 0 {
				if err := db.Load(context.Background(), d); err != nil {
					t.Fatal(err)
				}
			}
			out = append(out, db)
		}
		return out
	}},
}

// outboxData builds a store's content: for each destination URL, one
// task with one config for it and n pending deliveries, due from at on,
// one millisecond apart, the destinations one after the other (all of
// the first's are due before any of the second's).
type floodSpec struct {
	url string
	n   int
}

func outboxData(at time.Time, specs ...floodSpec) (*transfer.Data, map[string]bool) {
	d := &transfer.Data{Secret: []byte("webhook-test-secret-0123456789ab")}
	ids := map[string]bool{}
	owner := ulid.MustNew(ulid.Timestamp(at), rand.Reader).String()
	due := at
	for _, s := range specs {
		task := ulid.MustNew(ulid.Timestamp(at), rand.Reader).String()
		d.PushConfigs = append(d.PushConfigs, push.Config{ID: "c", TaskID: task, OwnerID: owner, URL: s.url, CreatedAt: at})
		for range s.n {
			id := ulid.MustNew(ulid.Timestamp(due), rand.Reader).String()
			ev, _ := json.Marshal(a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: task,
				Status: a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: a2a.FormatTime(at)}}})
			d.Deliveries = append(d.Deliveries, push.Delivery{ID: id, TaskID: task, ConfigID: "c", OwnerID: owner,
				Destination: push.Destination(s.url), State: push.Pending, Event: ev, CreatedAt: at, NextAt: due})
			ids[id] = true
			due = due.Add(time.Millisecond)
		}
	}
	return d, ids
}

// newWorker is a worker over db that may send to loopback.
func newWorker(t *testing.T, db outbox, cfg webhook.Config, agent string) *webhook.Worker {
	t.Helper()
	signer := signing.New(db, 0, time.Now)
	if err := signer.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	policy, err := push.ParseAllow([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	w := webhook.NewWorker(db, signer, webhook.NewSender(webhook.SenderConfig{Policy: policy, UserAgent: agent}), cfg)
	t.Cleanup(w.Stop)
	return w
}

// jtiOf reads the delivery id a request's KFA-Signature names.
func jtiOf(t *testing.T, header string) string {
	var c webhook.Claims
	if err := json.Unmarshal(payloadOf(header), &c); err != nil || c.JTI == "" {
		t.Errorf("a request without a readable KFA-Signature: %v", err)
	}
	return c.JTI
}

func pending(t *testing.T, db push.OutboxStore) int {
	t.Helper()
	st, err := db.OutboxStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Pending
}

func within(t *testing.T, d time.Duration, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s: not within %s", what, d)
	}
}

// payloadOf is the payload of a compact JWS (not verified: sender_test
// verifies signatures).
func payloadOf(jws string) []byte {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return nil
	}
	b, _ := base64.RawURLEncoding.DecodeString(parts[1])
	return b
}
