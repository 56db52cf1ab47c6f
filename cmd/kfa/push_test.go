package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/server"
)

// observed hears of a server's recorded delivery attempts.
type observed chan push.Attempt

func (o observed) Attempted(_ push.Delivery, a push.Attempt) { o <- a }

// TestPushCommands: kfa push list shows a failed delivery (and no
// secret), kfa push retry sends it again, and kfa push rotate-key and
// keys work with the server running (the JWKS lists both keys at once)
// and stopped.
func TestPushCommands(t *testing.T) {
	var answer atomic.Int32
	answer.Store(http.StatusGone)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(answer.Load())) }))
	defer recv.Close()
	obs := make(observed, 16)
	dir := filepath.Join(shortTempDir(t), "data")
	l := startServer(t, dir, func(c *server.Config) { c.PushAllow = []string{"127.0.0.1"}; c.PushObserver = obs })
	alice := decode[api.Agent](t, "agent", "create", "--data", dir, "--name", "alice")
	ac := client.New(l.url, client.WithToken(alice.Token))
	ctx := context.Background()
	res, err := ac.SendMessage(ctx, askReq("m-1", "", "Will the hook answer?"))
	if err != nil {
		t.Fatal(err)
	}
	task := res.Task
	if _, err := ac.CreatePushConfig(ctx, task.ID, a2a.TaskPushNotificationConfig{URL: recv.URL + "/hook", Token: "tok-cli-secret",
		Authentication: &a2a.PushAuthentication{Scheme: "Bearer", Credentials: "cred-cli-secret"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ac.CancelTask(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	if a := <-obs; a.Outcome != push.OutcomeFailed {
		t.Fatalf("first attempt: %+v", a)
	}

	failed := decode[api.DeliveryList](t, "push", "list", "--failed", "--data", dir)
	if len(failed.Deliveries) != 1 || failed.Deliveries[0].TaskID != task.ID || !strings.Contains(failed.Deliveries[0].Reason, "410") {
		t.Fatalf("push list --failed: %+v", failed)
	}
	id := failed.Deliveries[0].ID
	table := ok(t, "push", "list", "--data", dir, "--task", task.ID)
	for _, s := range []string{id, "failed", "http://127.0.0.1:"} {
		if !strings.Contains(table, s) {
			t.Errorf("push list lacks %q:\n%s", s, table)
		}
	}
	for _, out := range []string{table, mustJSONString(t, failed)} {
		for _, secret := range []string{"tok-cli-secret", "cred-cli-secret", "/hook"} {
			if strings.Contains(out, secret) {
				t.Errorf("push list shows %q:\n%s", secret, out)
			}
		}
	}
	if r := kfa(t, "push", "retry", task.ID, "--data", dir); r.code != 1 || !strings.Contains(r.stderr, "no delivery") {
		t.Errorf("retry of an unknown id: %s", r)
	}
	answer.Store(http.StatusOK)
	ok(t, "push", "retry", id, "--data", dir)
	if a := <-obs; a.Outcome != push.OutcomeDelivered {
		t.Fatalf("retried attempt: %+v", a)
	}
	if r := kfa(t, "push", "retry", id, "--data", dir); r.code != 1 || !strings.Contains(r.stderr, "has not failed") {
		t.Errorf("retry of a delivered one: %s", r)
	}
	if got := decode[api.DeliveryList](t, "push", "list", "--state", "delivered", "--data", dir); len(got.Deliveries) != 1 ||
		got.Deliveries[0].Attempts != 2 {
		t.Fatalf("after the retry: %+v", got)
	}

	keys := decode[api.SigningKeyList](t, "push", "keys", "--data", dir)
	if len(keys.Keys) != 1 || !keys.Keys[0].Current {
		t.Fatalf("keys: %+v", keys)
	}
	rotated := decode[api.SigningKey](t, "push", "rotate-key", "--data", dir)
	if rotated.ID == keys.Keys[0].ID || !rotated.Current {
		t.Fatalf("rotate: %+v", rotated)
	}
	resp, err := http.Get(l.url + "/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []struct {
			Kid string `json:"kid"`
			D   string `json:"d"`
		} `json:"keys"`
	}
	err = json.NewDecoder(resp.Body).Decode(&set)
	resp.Body.Close()
	if err != nil || len(set.Keys) != 2 || set.Keys[0].Kid != rotated.ID || set.Keys[1].Kid != keys.Keys[0].ID || set.Keys[0].D != "" {
		t.Fatalf("the JWKS after a rotation: %+v %v", set, err)
	}

	l.stop()
	again := decode[api.SigningKey](t, "push", "rotate-key", "--data", dir)
	list := decode[api.SigningKeyList](t, "push", "keys", "--data", dir)
	if len(list.Keys) != 3 || list.Keys[0].ID != again.ID || list.Keys[1].Current || list.Keys[1].ExpiresAt == "" {
		t.Fatalf("keys with the server stopped: %+v", list)
	}
	if out := ok(t, "push", "keys", "--data", dir); !strings.Contains(out, "current") || !strings.Contains(out, "in the JWKS until") {
		t.Errorf("push keys:\n%s", out)
	}
	ok(t, "check", "--data", dir)
}

func mustJSONString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPushListSaysWhyItWaits: a pending delivery's row shows, next to
// when it is tried again, what went wrong last time.
func TestPushListSaysWhyItWaits(t *testing.T) {
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer recv.Close()
	obs := make(observed, 16)
	dir := filepath.Join(shortTempDir(t), "data")
	l := startServer(t, dir, func(c *server.Config) {
		c.PushAllow, c.PushObserver, c.PushFirstRetry = []string{"127.0.0.1"}, obs, time.Hour
	})
	alice := decode[api.Agent](t, "agent", "create", "--data", dir, "--name", "alice")
	ac := client.New(l.url, client.WithToken(alice.Token))
	ctx := context.Background()
	res, err := ac.SendMessage(ctx, askReq("m-1", "", "Is the hook up?"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ac.CreatePushConfig(ctx, res.Task.ID, a2a.TaskPushNotificationConfig{URL: recv.URL + "/hook"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ac.CancelTask(ctx, res.Task.ID); err != nil {
		t.Fatal(err)
	}
	if a := <-obs; a.Outcome != push.OutcomeRetry {
		t.Fatalf("first attempt: %+v", a)
	}
	table := ok(t, "push", "list", "--data", dir)
	if !regexp.MustCompile(`pending .* next attempt in (\d+h)?\d+m\d+s; last attempt: the receiver answered 503\n`).MatchString(table) {
		t.Fatalf("push list does not say why the delivery waits:\n%s", table)
	}
}
