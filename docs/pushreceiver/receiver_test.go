package pushreceiver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/docs/pushreceiver"
	"github.com/kfa-project/kfa/server"
)

// TestReceiverWithKFA: the receiver of docs/push.md, behind a config of a
// real kfa server, handles the notification of a reply once; a replay, a
// changed body, a wrong token and an unsigned request are refused or
// dropped.
func TestReceiverWithKFA(t *testing.T) {
	cfg := server.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	cfg.AdminSocket = "off"
	cfg.PushAllow = []string{"127.0.0.1"}
	srv, err := server.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()

	// answered carries each delivery kfa made, once the receiver has
	// answered it: the replays below must come after the receiver is done
	// with the first copy (it claims a notification while handling it, and
	// a copy that arrives meanwhile is answered 503, "try again later").
	type delivery struct {
		header http.Header
		body   []byte
		code   int
	}
	handled := make(chan []byte, 4)
	answered := make(chan delivery, 4)
	rc := &pushreceiver.Receiver{JWKSURL: srv.URL() + "/.well-known/jwks.json", Token: "t-1",
		Handle: func(ev []byte) error { handled <- ev; return nil }}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		rec := httptest.NewRecorder()
		rc.ServeHTTP(rec, r)
		w.WriteHeader(rec.Code)
		answered <- delivery{r.Header.Clone(), b, rec.Code}
	}))
	defer recv.Close()

	ctx := context.Background()
	mk := func(name string) *client.Client {
		c, err := srv.Core().Agents.Create(ctx, name, []agents.Scope{agents.ScopeRead, agents.ScopePost})
		if err != nil {
			t.Fatal(err)
		}
		return client.New(srv.URL(), client.WithToken(c.Token))
	}
	alice, bob := mk("alice"), mk("bob")
	yes := true
	res, err := alice.SendMessage(ctx, a2a.SendMessageRequest{
		Message: &a2a.Message{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.DataPart(json.RawMessage(`{"action":"ask","question":"Does the example work?"}`))}},
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: &yes,
			TaskPushNotificationConfig: json.RawMessage(`{"url":"` + recv.URL + `/kfa","token":"t-1"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		DiscussionID string `json:"discussionId"`
	}
	if err := json.Unmarshal(res.Task.Metadata, &meta); err != nil {
		t.Fatalf("task metadata %s: %v", res.Task.Metadata, err)
	}
	if _, err := bob.Reply(ctx, meta.DiscussionID, "It does."); err != nil {
		t.Fatal(err)
	}
	var last delivery
	select {
	case last = <-answered:
	case <-time.After(30 * time.Second):
		t.Fatal("kfa delivered nothing within 30s")
	}
	if last.code != http.StatusNoContent {
		t.Fatalf("the receiver answered kfa's delivery %d", last.code)
	}
	ev := <-handled // it answered 204, so Handle ran
	if !strings.Contains(string(ev), `"TASK_STATE_COMPLETED"`) || !strings.Contains(string(ev), res.Task.ID) {
		t.Fatalf("event: %s", ev)
	}

	send := func(header http.Header, body string) int {
		req := httptest.NewRequest(http.MethodPost, "/kfa", strings.NewReader(body))
		req.Header = header.Clone()
		w := httptest.NewRecorder()
		rc.ServeHTTP(w, req)
		return w.Code
	}
	if code := send(last.header, string(last.body)); code != http.StatusNoContent {
		t.Fatalf("a replay (kfa retrying): %d", code)
	}
	select {
	case ev := <-handled:
		t.Fatalf("a duplicate was handled again: %s", ev)
	default:
	}
	if code := send(last.header, strings.Replace(string(last.body), "COMPLETED", "CANCELED", 1)); code != http.StatusUnauthorized {
		t.Fatalf("a changed body: %d", code)
	}
	wrong := last.header.Clone()
	wrong.Set("X-A2A-Notification-Token", "t-2")
	if code := send(wrong, string(last.body)); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d", code)
	}
	unsigned := last.header.Clone()
	unsigned.Del("KFA-Signature")
	if code := send(unsigned, string(last.body)); code != http.StatusUnauthorized {
		t.Fatalf("no signature: %d", code)
	}
}
