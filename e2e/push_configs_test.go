package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/server"
)

// TestPushConfigRules: the config routes of HTTP+JSON are the owner's
// (another agent's task answers as a missing one, byte for byte apart
// from the id), bounded, validated with the field and the rule named, and
// a refusal leaves the store as it was. Delete is idempotent.
func TestPushConfigRules(t *testing.T) {
	h := start(t, nil)
	ctx := bg()
	alice, ac := h.agent("alice")
	bob, _ := h.agent("bob")
	task := h.ask(ac, "m1", "Configs of mine")
	base := "/a2a/v1/tasks/" + task.ID + "/pushNotificationConfigs"

	resp, body := h.raw("POST", base, a2aHeaders(alice.Token), `{"url":"https://hooks.example.com/kfa","id":"main","token":"t1"}`)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"id":"main"`) || !strings.Contains(string(body), `"taskId":"`+task.ID+`"`) {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	if resp.Header.Get("Cache-Control") != "private, no-store" {
		t.Errorf("Cache-Control %q", resp.Header.Get("Cache-Control"))
	}
	resp, body = h.raw("GET", base+"/main", a2aHeaders(alice.Token), "")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"url":"https://hooks.example.com/kfa"`) {
		t.Fatalf("get: %d %s", resp.StatusCode, body)
	}

	// Foreign is missing: the same answer as a task that does not exist.
	missing := "01JD0000000000000000000000"
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "", ""}, {"GET", "/main", ""}, {"DELETE", "/main", ""}, {"POST", "", `{"url":"https://hooks.example.com/x"}`},
	} {
		r1, b1 := h.raw(tc.method, base+tc.path, a2aHeaders(bob.Token), tc.body)
		r2, b2 := h.raw(tc.method, "/a2a/v1/tasks/"+missing+"/pushNotificationConfigs"+tc.path, a2aHeaders(bob.Token), tc.body)
		if r1.StatusCode != 404 || r2.StatusCode != 404 || reason(b1) != "TASK_NOT_FOUND" ||
			strings.ReplaceAll(string(b1), task.ID, missing) != string(b2) {
			t.Errorf("%s %s foreign vs missing:\n%d %s\n%d %s", tc.method, tc.path, r1.StatusCode, b1, r2.StatusCode, b2)
		}
	}
	resp, body = h.raw("GET", base+"/nope", a2aHeaders(alice.Token), "")
	if resp.StatusCode != 404 || reason(body) != "TASK_NOT_FOUND" || !strings.Contains(string(body), "nope") {
		t.Errorf("missing config: %d %s", resp.StatusCode, body)
	}
	if resp, _ := h.raw("GET", base, a2aHeaders(""), ""); resp.StatusCode != 401 {
		t.Errorf("anonymous: %d", resp.StatusCode)
	}

	// Refusals name the field and the rule, and write nothing.
	before := h.digest()
	for _, tc := range []struct{ body, field, rule string }{
		{`{"url":"http://127.0.0.1/hook"}`, "url", "loopback"},
		{`{"url":"https://10.0.0.1/hook"}`, "url", "private"},
		{`{"url":"https://169.254.169.254/latest/meta-data"}`, "url", "link-local"},
		{`{"url":"https://[::1]/hook"}`, "url", "loopback"},
		{`{"url":"https://[fd00::1]/hook"}`, "url", "private"},
		{`{"url":"https://localhost:8443/hook"}`, "url", "loopback"},
		{`{"url":"https://[::7f00:1]/hook"}`, "url", "carries the IPv4 address 127.0.0.1 (IPv4-compatible), a loopback address"},
		{`{"url":"https://[::a9fe:a9fe]/hook"}`, "url", "link-local"},
		{`{"url":"https://[::ffff:0:7f00:1]/hook"}`, "url", "IPv4-translated"},
		{`{"url":"https://[64:ff9b:1::7f00:1]/hook"}`, "url", "NAT64"},
		{`{"url":"https://0x7f.1/hook"}`, "url", "numeric host"},
		{`{"url":"https://0x7f000001/hook"}`, "url", "numeric host"},
		{`{"url":"https://017700000001/hook"}`, "url", "numeric host"},
		{`{"url":"https://2130706433/hook"}`, "url", "numeric host"},
		{`{"url":"http://hooks.example.com/hook"}`, "url", "https"},
		{`{"url":"ftp://hooks.example.com/hook"}`, "url", "https"},
		{`{"url":"https://user:pw@hooks.example.com/hook"}`, "url", "user:password"},
		{`{"url":"/relative"}`, "url", "absolute"},
		{`{"url":""}`, "url", "required"},
		{`{"url":"https://hooks.example.com/` + strings.Repeat("a", 2048) + `"}`, "url", "at most 2048"},
		{`{"url":"https://hooks.example.com/","token":"a\nb"}`, "token", "ASCII"},
		{`{"url":"https://hooks.example.com/","authentication":{"scheme":"Bea rer","credentials":"x"}}`, "authentication.scheme", "scheme"},
		{`{"url":"https://hooks.example.com/","authentication":{"scheme":"Bearer","credentials":"x\r\nX-Evil: 1"}}`, "authentication.credentials", "ASCII"},
		{`{"url":"https://hooks.example.com/","id":"a/b"}`, "id", "letters"},
		{`{"url":"https://hooks.example.com/","taskId":"` + missing + `"}`, "taskId", "names task"},
	} {
		resp, body := h.raw("POST", base, a2aHeaders(alice.Token), tc.body)
		if resp.StatusCode != 400 || reason(body) != "INVALID_PARAMS" || !strings.Contains(string(body), `"field":"`+tc.field+`"`) ||
			!strings.Contains(string(body), tc.rule) {
			t.Errorf("%s: %d %s", tc.body, resp.StatusCode, body)
		}
	}
	if h.digest() != before {
		t.Fatal("a refused config changed the store")
	}
	// At most 10 a task; replacing one does not count.
	for i := 2; i <= push.MaxConfigsPerTask; i++ {
		if _, err := ac.CreatePushConfig(ctx, task.ID, pushCfg(fmt.Sprintf("https://hooks.example.com/%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	before = h.digest()
	if _, err := ac.CreatePushConfig(ctx, task.ID, pushCfg("https://hooks.example.com/11")); !isReason(err, "INVALID_PARAMS") ||
		!strings.Contains(err.Error(), "10") {
		t.Fatalf("an 11th config: %v", err)
	}
	if h.digest() != before {
		t.Fatal("a refused config changed the store")
	}
	replaced := pushCfg("https://hooks.example.com/replaced")
	replaced.ID = "main"
	if _, err := ac.CreatePushConfig(ctx, task.ID, replaced); err != nil {
		t.Fatalf("replacing a config at the bound: %v", err)
	}
	list, err := ac.PushConfigs(ctx, task.ID, 4, "")
	if err != nil || len(list.Configs) != 4 || list.NextPageToken == "" {
		t.Fatalf("page 1: %+v %v", list, err)
	}
	seen := len(list.Configs)
	for list.NextPageToken != "" {
		if list, err = ac.PushConfigs(ctx, task.ID, 4, list.NextPageToken); err != nil {
			t.Fatal(err)
		}
		seen += len(list.Configs)
	}
	if seen != push.MaxConfigsPerTask {
		t.Fatalf("paged through %d configs", seen)
	}

	// Delete is idempotent; a terminal task takes no new config.
	for range 2 {
		resp, body := h.raw("DELETE", base+"/main", a2aHeaders(alice.Token), "")
		if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "{}" {
			t.Fatalf("delete: %d %s", resp.StatusCode, body)
		}
	}
	// A task of its own, with no config: canceling the one above would
	// queue deliveries whose retries write to the store between digests.
	done := h.ask(ac, "m2", "A question withdrawn")
	if _, err := ac.CancelTask(ctx, done.ID); err != nil {
		t.Fatal(err)
	}
	before = h.digest()
	if _, err := ac.CreatePushConfig(ctx, done.ID, pushCfg("https://hooks.example.com/late")); !isReason(err, "UNSUPPORTED_OPERATION") {
		t.Fatalf("config on a canceled task: %v", err)
	}
	if h.digest() != before {
		t.Fatal("a refused config changed the store")
	}
}

func isReason(err error, r string) bool {
	ce, ok := err.(*client.Error)
	return ok && ce.Reason == r
}

// TestPushSSRF: destinations that are not public are refused when the
// config is created, and a name that resolves to one, or a redirect to
// one, is never delivered to without --push-allow.
func TestPushSSRF(t *testing.T) {
	target := newReceiver(t, nil) // what an attacker wants reached
	redirector := newReceiver(t, func(_ int, w http.ResponseWriter) {
		w.Header().Set("Location", target.url()+"/internal")
		w.WriteHeader(http.StatusFound)
	})
	port := target.srv.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":")+1:]
	obs := newAttempts()
	resolver := fakeResolver{
		"rebind.example.com":   {netip.MustParseAddr("127.0.0.1")},
		"metadata.example.com": {netip.MustParseAddr("169.254.169.254")},
	}
	h := start(t, func(c *server.Config) {
		c.PushObserver = obs
		c.PushResolver = resolver
		// Only the redirector's host is allowed, by name: 127.0.0.1 itself
		// is not.
		c.PushAllow = []string{"redirector.test"}
	})
	resolver["redirector.test"] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	ctx := bg()
	_, ac := h.agent("alice")
	for i, url := range []string{
		"https://rebind.example.com:" + port + "/hook",
		"https://metadata.example.com/latest/meta-data",
		"http://redirector.test:" + redirector.url()[strings.LastIndex(redirector.url(), ":")+1:] + "/hook",
	} {
		task := h.ask(ac, fmt.Sprintf("m-%d", i), "SSRF "+url)
		if _, err := ac.CreatePushConfig(ctx, task.ID, pushCfg(url)); err != nil {
			t.Fatalf("%s: a host name is checked when delivering, not refused at create: %v", url, err)
		}
		if _, err := ac.CancelTask(ctx, task.ID); err != nil {
			t.Fatal(err)
		}
		tries := obs.until(t)
		a := tries[len(tries)-1].a
		if len(tries) != 1 || a.Outcome != push.OutcomeFailed {
			t.Fatalf("%s: %+v", url, tries)
		}
		t.Logf("%s: %s", url, a.Error)
		switch i {
		case 0:
			if !strings.Contains(a.Error, "resolves to 127.0.0.1, a loopback address") {
				t.Errorf("rebinding: %s", a.Error)
			}
		case 1:
			if !strings.Contains(a.Error, "169.254.169.254, a link-local (cloud metadata) address") {
				t.Errorf("metadata: %s", a.Error)
			}
		case 2:
			if a.Status != http.StatusFound || !strings.Contains(a.Error, "redirects are not followed") {
				t.Errorf("redirect: %+v", a)
			}
		}
	}
	if n := len(target.got()); n != 0 {
		t.Fatalf("the private target got %d requests", n)
	}
	if n := len(redirector.got()); n != 1 {
		t.Fatalf("the allowed redirector got %d requests, want 1", n)
	}
}

// TestPushOff: with --push=false the card leaves pushNotifications out
// (false, unset),
// the config methods answer PushNotificationNotSupportedError on every
// binding, and an ask with an inline config is refused without writing.
func TestPushOff(t *testing.T) {
	h := start(t, func(c *server.Config) { c.Push = false })
	alice, ac := h.agent("alice")
	_, body := h.raw("GET", "/.well-known/agent-card.json", nil, "")
	var card a2a.AgentCard
	if err := json.Unmarshal(body, &card); err != nil || card.Capabilities.PushNotifications || !card.Capabilities.Streaming ||
		strings.Contains(string(body), `"pushNotifications"`) {
		t.Fatalf("card: %s", body)
	}
	task := h.ask(ac, "m1", "No pushes here")
	resp, body := h.raw("POST", "/a2a/v1/tasks/"+task.ID+"/pushNotificationConfigs", a2aHeaders(alice.Token), `{"url":"https://hooks.example.com/"}`)
	if resp.StatusCode != 400 || reason(body) != "PUSH_NOTIFICATION_NOT_SUPPORTED" {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	for _, m := range []string{"ListTaskPushNotificationConfigs", "tasks/pushNotificationConfig/list"} {
		resp, body := h.raw("POST", "/a2a/jsonrpc", a2aHeaders(alice.Token),
			`{"jsonrpc":"2.0","id":1,"method":"`+m+`","params":{"taskId":"`+task.ID+`","id":"`+task.ID+`"}}`)
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"code":-32003`) {
			t.Fatalf("%s: %s", m, body)
		}
	}
	before := h.digest()
	_, err := ac.SendMessage(bg(), askWithPush("m2", "With a config", map[string]any{"url": "https://hooks.example.com/"}))
	if !isReason(err, "PUSH_NOTIFICATION_NOT_SUPPORTED") {
		t.Fatalf("inline config: %v", err)
	}
	if h.digest() != before {
		t.Fatal("a refused ask changed the store")
	}
}

// TestPushInline: a config sent with an ask is stored with the task (over
// HTTP+JSON 1.0 and JSON-RPC 0.3's pushNotificationConfig); a bad one is
// refused, naming the field, and writes nothing; a retried ask stores no
// second config.
func TestPushInline(t *testing.T) {
	h := start(t, nil)
	ctx := bg()
	alice, ac := h.agent("alice")
	before := h.digest()
	_, err := ac.SendMessage(ctx, askWithPush("m-bad", "Bad config", map[string]any{"url": "https://192.168.1.1/"}))
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Reason != "INVALID_PARAMS" || !strings.Contains(ce.Message, "configuration.taskPushNotificationConfig.url") ||
		!strings.Contains(ce.Message, "private") {
		t.Fatalf("bad inline config: %v", err)
	}
	if h.digest() != before {
		t.Fatal("a refused ask changed the store")
	}
	req := askWithPush("m-ok", "Good config", map[string]any{"url": "https://hooks.example.com/a", "id": "inline"})
	first, err := ac.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ac.SendMessage(ctx, askWithPush("m-ok", "Good config", map[string]any{"url": "https://hooks.example.com/b"}))
	if err != nil || again.Task.ID != first.Task.ID {
		t.Fatalf("retry: %+v %v", again, err)
	}
	list, err := ac.PushConfigs(ctx, first.Task.ID, 0, "")
	if err != nil || len(list.Configs) != 1 || list.Configs[0].ID != "inline" || list.Configs[0].URL != "https://hooks.example.com/a" {
		t.Fatalf("configs after a retry: %+v %v", list, err)
	}

	// 0.3: configuration.pushNotificationConfig with authentication.schemes.
	resp, body := h.raw("POST", "/a2a/jsonrpc", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + alice.Token},
		`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-03","role":"user",`+
			`"parts":[{"kind":"data","data":{"action":"ask","question":"From 0.3"}}]},`+
			`"configuration":{"pushNotificationConfig":{"url":"https://hooks.example.com/03","authentication":{"schemes":["Basic"],"credentials":"x"}}}}}`)
	var out struct {
		Result struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil || out.Result.ID == "" {
		t.Fatalf("0.3 send: %s", body)
	}
	list, err = ac.PushConfigs(ctx, out.Result.ID, 0, "")
	if err != nil || len(list.Configs) != 1 || list.Configs[0].Authentication == nil || list.Configs[0].Authentication.Scheme != "Basic" {
		t.Fatalf("0.3 inline config: %+v %v", list, err)
	}
}
