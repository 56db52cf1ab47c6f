package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/kfa-project/kfa/a2a"

	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/webhook"
)

// received is one request a push receiver got.
type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a push notification receiver on 127.0.0.1: it records
// every request and answers with answer(n), n counting from 1.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	all    []received
	answer func(n int, w http.ResponseWriter)
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter)) *receiver {
	t.Helper()
	r := &receiver{answer: answer}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.all = append(r.all, received{header: req.Header.Clone(), body: b, at: time.Now()})
		n := len(r.all)
		r.mu.Unlock()
		if r.answer == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		r.answer(n, w)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) url() string { return r.srv.URL }

// got returns the requests received so far.
func (r *receiver) got() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.all...)
}

// status answers every request with code.
func status(code int) func(int, http.ResponseWriter) {
	return func(_ int, w http.ResponseWriter) { w.WriteHeader(code) }
}

// attempt is one recorded delivery attempt.
type attempt struct {
	d push.Delivery
	a push.Attempt
}

// attempts hears of every recorded attempt of a server (its
// PushObserver).
type attempts struct{ ch chan attempt }

func newAttempts() *attempts { return &attempts{ch: make(chan attempt, 256)} }

// Attempted implements webhook.Observer.
func (o *attempts) Attempted(d push.Delivery, a push.Attempt) { o.ch <- attempt{d, a} }

var _ webhook.Observer = (*attempts)(nil)

// next waits for the next recorded attempt.
func (o *attempts) next(t *testing.T) attempt {
	t.Helper()
	select {
	case a := <-o.ch:
		return a
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery attempt recorded within 30s")
	}
	return attempt{}
}

// until waits for attempts until one is final (delivered or failed) and
// returns them all.
func (o *attempts) until(t *testing.T) []attempt {
	t.Helper()
	var out []attempt
	for {
		a := o.next(t)
		out = append(out, a)
		if a.a.Outcome != push.OutcomeRetry {
			return out
		}
	}
}

// pushClaims are the claims of KFA-Signature.
type pushClaims struct {
	IAT        int64  `json:"iat"`
	JTI        string `json:"jti"`
	TaskID     string `json:"taskId"`
	BodySHA256 string `json:"bodySha256"`
}

// verifyPush checks a request's KFA-Signature against the server's JWKS
// and the body, and returns its claims.
func verifyPush(t *testing.T, h *harness, r received) pushClaims {
	t.Helper()
	resp, body := h.raw("GET", "/.well-known/jwks.json", nil, "")
	if resp.StatusCode != 200 {
		t.Fatalf("jwks: %d %s", resp.StatusCode, body)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		t.Fatalf("jwks: %v %s", err, body)
	}
	obj, err := jose.ParseSignedCompact(r.header.Get("KFA-Signature"), []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatalf("KFA-Signature %q: %v", r.header.Get("KFA-Signature"), err)
	}
	kid := obj.Signatures[0].Protected.KeyID
	keys := set.Key(kid)
	if len(keys) != 1 {
		t.Fatalf("the JWKS has %d keys with kid %q: %s", len(keys), kid, body)
	}
	payload, err := obj.Verify(keys[0])
	if err != nil {
		t.Fatalf("the signature does not verify: %v", err)
	}
	var c pushClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(r.body)
	if c.BodySHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("bodySha256 %s does not match the body %s", c.BodySHA256, r.body)
	}
	if c.IAT <= 0 || c.JTI == "" || c.TaskID == "" {
		t.Fatalf("claims: %+v", c)
	}
	return c
}

// fakeResolver resolves the names it knows to the addresses it holds.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if ips, ok := f[host]; ok {
		return ips, nil
	}
	return nil, &noSuchHost{host}
}

// noSuchHost is "no such host" without touching real DNS.
type noSuchHost struct{ host string }

func (e *noSuchHost) Error() string { return "lookup " + e.host + ": no such host" }

// pushCfg is a config for url.
func pushCfg(url string) a2a.TaskPushNotificationConfig {
	return a2a.TaskPushNotificationConfig{URL: url}
}

// configsOutcome reads a push config listing: {"configs": [...]} (1.0)
// or a bare array (0.3).
func configsOutcome(t *testing.T, raw []byte) outcome {
	t.Helper()
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		var v struct {
			Configs       []json.RawMessage `json:"configs"`
			NextPageToken *string           `json:"nextPageToken"`
		}
		if err := json.Unmarshal(raw, &v); err != nil || v.Configs == nil || v.NextPageToken == nil {
			t.Fatalf("not a push config listing: %s", raw)
		}
		list = v.Configs
	}
	return outcome{kind: "configs", state: fmt.Sprint(len(list))}
}

// restConfigsOutcome is configsOutcome of an HTTP+JSON answer.
func restConfigsOutcome(t *testing.T, raw []byte, status int) outcome {
	t.Helper()
	if status != 200 {
		return outcome{kind: "error", reason: reason(raw)}
	}
	return configsOutcome(t, raw)
}
