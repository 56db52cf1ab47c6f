package pushreceiver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/kfa-project/kfa/docs/pushreceiver"
)

// signer signs notifications as kfa does, with a key its JWKS serves.
type signer struct {
	jwks string
	sign jose.Signer
}

func newSigner(t *testing.T) signer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub := jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{pub}})
	}))
	t.Cleanup(srv.Close)
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: "k1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return signer{jwks: srv.URL, sign: s}
}

// request is a signed notification of delivery jti.
func (s signer) request(t *testing.T, jti, body string) *http.Request {
	t.Helper()
	sum := sha256.Sum256([]byte(body))
	claims, err := json.Marshal(pushreceiver.Claims{IssuedAt: time.Now().Unix(), JTI: jti, TaskID: "t1",
		BodySHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.sign.Sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	compact, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/kfa", strings.NewReader(body))
	req.Header.Set("KFA-Signature", compact)
	return req
}

// TestDuplicateWhileHandling: a copy of a notification that arrives while
// the first is still being handled (kfa gave up waiting and retried, or
// someone replays it) is not handled a second time: it gets 503, so kfa
// sends it again later, when it is a plain duplicate (204). A failed
// Handle releases the delivery, so the next copy handles it.
func TestDuplicateWhileHandling(t *testing.T) {
	s := newSigner(t)
	var calls atomic.Int32
	var during int
	rc := &pushreceiver.Receiver{JWKSURL: s.jwks}
	rc.Handle = func([]byte) error {
		if calls.Add(1) == 1 {
			w := httptest.NewRecorder()
			rc.ServeHTTP(w, s.request(t, "d1", `{"n":1}`))
			during = w.Code
		}
		return nil
	}
	w := httptest.NewRecorder()
	rc.ServeHTTP(w, s.request(t, "d1", `{"n":1}`))
	if w.Code != http.StatusNoContent || during != http.StatusServiceUnavailable || calls.Load() != 1 {
		t.Fatalf("first %d, the copy during it %d, Handle called %d times; want 204, 503, once", w.Code, during, calls.Load())
	}
	w = httptest.NewRecorder()
	rc.ServeHTTP(w, s.request(t, "d1", `{"n":1}`))
	if w.Code != http.StatusNoContent || calls.Load() != 1 {
		t.Fatalf("a copy after it: %d, Handle called %d times; want 204, once", w.Code, calls.Load())
	}

	fail := true
	rc2 := &pushreceiver.Receiver{JWKSURL: s.jwks, Handle: func([]byte) error {
		calls.Add(1)
		if fail {
			fail = false
			return http.ErrHandlerTimeout
		}
		return nil
	}}
	calls.Store(0)
	for i, want := range []int{http.StatusServiceUnavailable, http.StatusNoContent, http.StatusNoContent} {
		w := httptest.NewRecorder()
		rc2.ServeHTTP(w, s.request(t, "d2", `{"n":2}`))
		if w.Code != want {
			t.Fatalf("attempt %d after a failed Handle: %d, want %d", i+1, w.Code, want)
		}
	}
	if calls.Load() != 2 {
		t.Fatalf("Handle called %d times, want 2 (the failure, then the retry)", calls.Load())
	}
}
