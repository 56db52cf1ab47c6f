package e2e

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

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
	if _, err := ac.CancelTask(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	before = h.digest()
	if _, err := ac.CreatePushConfig(ctx, task.ID, pushCfg("https://hooks.example.com/late")); !isReason(err, "UNSUPPORTED_OPERATION") {
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
