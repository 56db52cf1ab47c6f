package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/server"
)

// askWithPush is an ask whose configuration carries a push config.
func askWithPush(msgID, question string, cfg map[string]any) a2a.SendMessageRequest {
	req := askReq(msgID, question, nil)
	req.Configuration.TaskPushNotificationConfig = json.RawMessage(mustJSON(cfg))
	return req
}

// TestPushDelivered: an ask with an inline config pointing at a loopback
// receiver (allowed by --push-allow 127.0.0.1); a reply by another agent
// makes the receiver get exactly one StreamResponse with the completed
// status, the configured Authorization and token, and a KFA-Signature
// that verifies against /.well-known/jwks.json with the delivery's id as
// its jti. No secret shows in the log, the metrics or the operator's
// listing.
func TestPushDelivered(t *testing.T) {
	recv := newReceiver(t, nil)
	obs := newAttempts()
	h := start(t, func(c *server.Config) { c.PushAllow = []string{"127.0.0.1"}; c.PushObserver = obs })
	ctx := bg()
	_, alice := h.agent("alice")
	_, bob := h.agent("bob")

	res, err := alice.SendMessage(ctx, askWithPush("m-push", "Who hears of the answer?", map[string]any{
		"url": recv.url() + "/hook?sig=url-secret", "token": "tok-secret-1",
		"authentication": map[string]any{"scheme": "Bearer", "credentials": "cred-secret-1"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	task := *res.Task
	list, err := alice.PushConfigs(ctx, task.ID, 0, "")
	if err != nil || len(list.Configs) != 1 {
		t.Fatalf("configs: %+v %v", list, err)
	}
	cfg := list.Configs[0]
	if cfg.TaskID != task.ID || cfg.URL != recv.url()+"/hook?sig=url-secret" || cfg.Token != "tok-secret-1" ||
		cfg.Authentication == nil || cfg.Authentication.Scheme != "Bearer" || cfg.Authentication.Credentials != "" {
		t.Fatalf("the stored config (credentials are write-only): %+v %+v", cfg, cfg.Authentication)
	}

	if _, err := bob.Reply(ctx, discussionOf(t, task), "Everyone with a config."); err != nil {
		t.Fatal(err)
	}
	done := obs.until(t)
	if len(done) != 1 || done[0].a.Outcome != push.OutcomeDelivered || done[0].d.TaskID != task.ID {
		t.Fatalf("attempts: %+v", done)
	}
	got := recv.got()
	if len(got) != 1 {
		t.Fatalf("the receiver got %d requests, want exactly 1", len(got))
	}
	r := got[0]
	for k, want := range map[string]string{
		"Content-Type": "application/a2a+json", "Authorization": "Bearer cred-secret-1", "X-A2A-Notification-Token": "tok-secret-1",
	} {
		if v := r.header.Get(k); v != want {
			t.Errorf("%s: %q, want %q", k, v, want)
		}
	}
	var ev a2a.StreamResponse
	if err := json.Unmarshal(r.body, &ev); err != nil || ev.StatusUpdate == nil {
		t.Fatalf("body is not a StreamResponse with a statusUpdate: %s", r.body)
	}
	if u := ev.StatusUpdate; u.TaskID != task.ID || u.ContextID != task.ContextID || u.Status.State != a2a.TaskStateCompleted ||
		u.Status.Message == nil || u.Status.Timestamp == "" {
		t.Fatalf("status update: %s", r.body)
	}
	if ev.Task != nil || ev.ArtifactUpdate != nil || ev.Message != nil {
		t.Fatalf("one event per POST: %s", r.body)
	}
	claims := verifyPush(t, h, r)
	deliveries, err := h.admin.Deliveries(ctx, client.DeliveryQuery{TaskID: task.ID})
	if err != nil || len(deliveries.Deliveries) != 1 {
		t.Fatalf("outbox: %+v %v", deliveries, err)
	}
	d := deliveries.Deliveries[0]
	if claims.JTI != d.ID || claims.JTI != done[0].d.ID || claims.TaskID != task.ID {
		t.Fatalf("claims %+v; delivery %s", claims, d.ID)
	}
	if d.State != "delivered" || d.Attempts != 1 || d.ConfigID != cfg.ID || !strings.HasPrefix(d.Destination, "http://127.0.0.1:") {
		t.Fatalf("delivery: %+v", d)
	}

	// No secret anywhere but in the request to the receiver.
	_, metrics := h.raw("GET", "/metrics", nil, "")
	for _, want := range []string{`kfa_push_deliveries_total{outcome="delivered"} 1`, "\nkfa_push_queue_depth 0\n",
		"\nkfa_push_oldest_pending_age_seconds 0\n", "kfa_push_delivery_latency_seconds_count 1\n"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	listing := mustJSON(deliveries)
	for _, secret := range []string{"cred-secret-1", "tok-secret-1", "url-secret"} {
		for where, text := range map[string]string{"log": h.logBuf.String(), "metrics": string(metrics), "kfa push list": listing} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows the secret %q", where, secret)
			}
		}
	}
}

// TestPushRetries: a receiver answering 503 twice and then 200 gets three
// attempts, each gap longer than the one before and none early; one
// answering 410 gets one, and the delivery fails at once.
func TestPushRetries(t *testing.T) {
	flaky := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	gone := newReceiver(t, status(http.StatusGone))
	obs := newAttempts()
	h := start(t, func(c *server.Config) {
		c.PushAllow = []string{"127.0.0.1"}
		c.PushObserver = obs
		c.PushFirstRetry = 40 * time.Millisecond
	})
	ctx := bg()
	_, alice := h.agent("alice")

	res, err := alice.SendMessage(ctx, askWithPush("m-flaky", "Retry me", map[string]any{"url": flaky.url()}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.CancelTask(ctx, res.Task.ID); err != nil {
		t.Fatal(err)
	}
	tries := obs.until(t)
	if len(tries) != 3 || tries[0].a.Outcome != push.OutcomeRetry || tries[1].a.Outcome != push.OutcomeRetry ||
		tries[2].a.Outcome != push.OutcomeDelivered || tries[0].a.Status != 503 {
		t.Fatalf("attempts: %+v", tries)
	}
	got := flaky.got()
	if len(got) != 3 {
		t.Fatalf("the receiver got %d requests, want 3", len(got))
	}
	var gaps []time.Duration
	for i := range 2 {
		planned := tries[i].a.NextAt.Sub(tries[i].a.At)
		gaps = append(gaps, planned)
		// The next request comes no earlier than planned (the store keeps
		// times to the millisecond).
		if actual := got[i+1].at.Sub(got[i].at); actual < planned-time.Millisecond {
			t.Errorf("attempt %d came %s after the one before, earlier than the planned %s", i+2, actual, planned)
		}
	}
	if gaps[1] <= gaps[0] {
		t.Errorf("gaps do not grow: %v", gaps)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, verifyPush(t, h, r).JTI)
	}
	if ids[0] != ids[1] || ids[1] != ids[2] || ids[0] != tries[0].d.ID {
		t.Errorf("the jti changed between attempts: %v", ids)
	}
	var ev a2a.StreamResponse
	if err := json.Unmarshal(got[2].body, &ev); err != nil || ev.StatusUpdate == nil || ev.StatusUpdate.Status.State != a2a.TaskStateCanceled {
		t.Errorf("a cancel announces CANCELED: %s", got[2].body)
	}

	res, err = alice.SendMessage(ctx, askWithPush("m-gone", "Gone", map[string]any{"url": gone.url()}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.CancelTask(ctx, res.Task.ID); err != nil {
		t.Fatal(err)
	}
	tries = obs.until(t)
	if len(tries) != 1 || tries[0].a.Outcome != push.OutcomeFailed || tries[0].a.Status != 410 {
		t.Fatalf("410: %+v", tries)
	}
	if n := len(gone.got()); n != 1 {
		t.Fatalf("the 410 receiver got %d requests, want 1", n)
	}
	failed, err := h.admin.Deliveries(ctx, client.DeliveryQuery{State: "failed"})
	if err != nil || len(failed.Deliveries) != 1 || !strings.Contains(failed.Deliveries[0].Reason, "410") {
		t.Fatalf("failed deliveries: %+v %v", failed, err)
	}
}
