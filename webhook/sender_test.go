package webhook

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfa-project/kfa/push"
)

type resolver map[string][]netip.Addr

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if ips, ok := r[host]; ok {
		return ips, nil
	}
	return nil, &noHost{host}
}

type noHost struct{ host string }

func (e *noHost) Error() string { return "lookup " + e.host + ": no such host" }

func port(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	u := srv.URL
	return u[strings.LastIndex(u, ":")+1:]
}

func TestSenderChecksEveryAddress(t *testing.T) {
	var hits atomic.Int32
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body) // so that the server notices the client leaving
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "/busy":
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()
	defer close(stop)
	p := port(t, srv)
	res := resolver{
		"rebind.example.com": {netip.MustParseAddr("127.0.0.1")},
		"mixed.test":         {netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("127.0.0.1")},
		"allowed.test":       {netip.MustParseAddr("127.0.0.1")},
		"compat.test":        {netip.MustParseAddr("::7f00:1")},
		"translated.test":    {netip.MustParseAddr("::ffff:0:7f00:1")},
		"nat64.test":         {netip.MustParseAddr("64:ff9b:1::7f00:1")},
	}
	open, err := push.ParseAllow(nil)
	if err != nil {
		t.Fatal(err)
	}
	allow, err := push.ParseAllow([]string{"127.0.0.1", "allowed.test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		policy  push.Policy
		url     string
		status  int
		refused bool
		errPart string
		retry   time.Duration
	}{
		{"a name that resolves to loopback", open, "https://rebind.example.com:" + p + "/", 0, true, "resolves to 127.0.0.1, a loopback address", 0},
		{"a loopback literal", open, "https://127.0.0.1:" + p + "/", 0, true, "loopback", 0},
		{"a name that resolves to IPv4-compatible loopback", open, "https://compat.test:" + p + "/", 0, true, "carries the IPv4 address 127.0.0.1", 0},
		{"a name that resolves to IPv4-translated loopback", open, "https://translated.test:" + p + "/", 0, true, "carries the IPv4 address 127.0.0.1", 0},
		{"a name that resolves to NAT64 loopback", open, "https://nat64.test:" + p + "/", 0, true, "carries the IPv4 address 127.0.0.1", 0},
		{"plain http not allowed", open, "http://8.8.8.8:" + p + "/", 0, true, "https", 0},
		{"an unknown name", open, "https://nowhere.test/", 0, false, "no such host", 0},
		{"the allowed address", allow, "http://127.0.0.1:" + p + "/", 202, false, "", 0},
		{"the allowed name", allow, "http://allowed.test:" + p + "/", 202, false, "", 0},
		{"the allowed one of two addresses", allow, "https://mixed.test:" + p + "/", 0, false, "", 0}, // TLS to a plain server fails: it connected
		{"a redirect is the answer", allow, "http://127.0.0.1:" + p + "/redirect", 302, false, "", 0},
		{"Retry-After", allow, "http://127.0.0.1:" + p + "/busy", 503, false, "", 2 * time.Minute},
		{"too slow", allow, "http://127.0.0.1:" + p + "/slow", 0, false, "in time", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := hits.Load()
			s := NewSender(SenderConfig{Policy: tc.policy, Resolver: res, Timeout: 300 * time.Millisecond})
			defer s.Close()
			r := s.Send(context.Background(), Request{Config: push.Config{URL: tc.url, Token: "t"}, Body: []byte("{}"), Signature: "sig"})
			if r.Status != tc.status || r.Refused != tc.refused || r.RetryAfter != tc.retry {
				t.Fatalf("%+v", r)
			}
			if tc.errPart != "" && (r.Err == nil || !strings.Contains(r.Err.Error(), tc.errPart)) {
				t.Fatalf("error %v, want %q", r.Err, tc.errPart)
			}
			if tc.refused && hits.Load() != before {
				t.Fatal("a refused destination was reached")
			}
			if r.Err != nil && strings.Contains(r.Err.Error(), "?") {
				t.Fatalf("the error shows the URL: %v", r.Err)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"30":                            30 * time.Second,
		"-5":                            0,
		"soon":                          0,
		"99999999":                      7 * 24 * time.Hour,
		"Wed, 02 Dec 2026 10:05:00 GMT": 5 * time.Minute,
		"Wed, 02 Dec 2026 09:00:00 GMT": 0,
	} {
		if got := retryAfter(in, now); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}
