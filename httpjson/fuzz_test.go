package httpjson_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/server"
)

// fuzzServer is one server per fuzzing process, built on first use.
var fuzzServer = sync.OnceValues(func() (*server.Server, error) {
	dir, err := os.MkdirTemp("", "kfa-fuzz-")
	if err != nil {
		return nil, err
	}
	cfg := server.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.AdminSocket = "off"
	cfg.AskRate, cfg.MaxOpenTasks, cfg.SearchRate, cfg.AuthFailRate, cfg.RequestRate = 0, 0, 0, 0, 0
	cfg.BatchDelay = time.Millisecond
	return server.New(cfg, slog.New(slog.DiscardHandler))
})

// serve runs one request through the real handler in process and checks
// the invariants every answer keeps: never a 5xx, always a JSON body (or
// none), never a wildcard CORS header on an answer that depends on a
// credential.
func serve(t *testing.T, r *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	srv, err := fuzzServer()
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, r)
	if w.Code >= 500 {
		t.Fatalf("%s %s: %d %s", r.Method, r.URL, w.Code, w.Body.Bytes())
	}
	if w.Body.Len() > 0 && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && !json.Valid(w.Body.Bytes()) {
		t.Fatalf("%s %s: invalid JSON answer %q", r.Method, r.URL, w.Body.Bytes())
	}
	if r.Header.Get("Authorization") != "" && w.Header().Get("Access-Control-Allow-Origin") == "*" &&
		!strings.HasPrefix(r.URL.Path, "/.well-known/") && !strings.HasPrefix(r.URL.Path, "/api/v1/discussions") {
		t.Fatalf("%s %s: wildcard CORS on a credentialed route", r.Method, r.URL)
	}
	return w
}

func FuzzMessageSendBody(f *testing.F) {
	for _, s := range []string{
		`{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"bbolt timeout"}]}}`,
		`{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"data":{"action":"search","query":"x","limit":3}}]}}`,
		`{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"data":{"action":"ask","question":"q"}}]},"configuration":{"returnImmediately":true}}`,
		`{"message":{"role":"ROLE_USER","messageId":"m1","metadata":{"skill":"ask-network"},"parts":[{"text":"q"}]}}`,
		`{"message":{"role":"ROLE_USER","message_id":"m1","parts":[{"url":"http://x","raw":"AA=="}]}}`,
		`{"message":{"parts":[{"data":[1,2,{"a":null}]}]}}`, `{"message":null}`, `[]`, `{"a":1,"a":2}`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", "/a2a/v1/message:send", bytes.NewReader(body))
		r.Header.Set("A2A-Version", "1.0")
		r.Header.Set("Content-Type", "application/json")
		w := serve(t, r)
		if w.Code == 200 && !json.Valid(w.Body.Bytes()) {
			t.Fatal("a 200 without a JSON body")
		}
	})
}

func FuzzListTasksQuery(f *testing.F) {
	for _, s := range []string{
		"pageSize=10", "status=TASK_STATE_WORKING&contextId=c", "statusTimestampAfter=2026-12-02T10:30:00.000Z",
		"pageToken=AQID&includeArtifacts=true&historyLength=0", "page_size=-1", "status=%00", "a=%zz", "pageSize=99999999999999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		r := httptest.NewRequest("GET", "/a2a/v1/tasks", nil)
		r.URL.RawQuery = query
		r.Header.Set("A2A-Version", "1.0")
		r.Header.Set("Authorization", "Bearer kfa_"+strings.Repeat("a", 52))
		w := serve(t, r)
		if w.Code != 401 && w.Code != 400 && w.Code != 429 {
			t.Fatalf("an unknown token got %d", w.Code)
		}
	})
}

func FuzzBearer(f *testing.F) {
	for _, s := range []string{"Bearer kfa_abc", "bearer  kfa_" + strings.Repeat("a", 52), "Basic x", "Bearer", "", "Bearer \x00", "Bearer kfa_" + strings.Repeat("7", 52)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest("GET", "/api/v1/whoami", nil)
		r.Header["Authorization"] = []string{header}
		w := serve(t, r)
		if w.Code == 200 {
			t.Fatalf("a guessed credential %q was accepted", header)
		}
		if w.Code == 401 && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer ") {
			t.Fatal("401 without a Bearer challenge")
		}
	})
}

func FuzzPath(f *testing.F) {
	for _, s := range []string{"/a2a/v1/tasks/abc:cancel", "/a2a/v1/tasks/%2e%2e", "/api/v1/discussions/01JD0000000000000000000000/replies",
		"/a2a/v1/tasks/a:subscribe", "//", "/a2a/jsonrpc/"} {
		f.Add("GET", s)
		f.Add("POST", s)
	}
	f.Fuzz(func(t *testing.T, method, path string) {
		if !validMethod(method) || !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#?") {
			return
		}
		r, err := http.NewRequest(method, "http://kfa.test"+path, io.NopCloser(strings.NewReader("")))
		if err != nil {
			return
		}
		r.RequestURI = path
		r.Header.Set("A2A-Version", "1.0")
		serve(t, r)
	})
}

func validMethod(m string) bool {
	if m == "" || len(m) > 16 {
		return false
	}
	for _, c := range m {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}
