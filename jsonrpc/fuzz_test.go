package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/server"
)

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

// FuzzEnvelope sends arbitrary bodies to the JSON-RPC endpoint: the answer
// is always HTTP 200 (or 204 for a notification) with one well-formed
// JSON-RPC response, or an event stream.
func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`,
		`{"jsonrpc":"2.0","id":"a","method":"ListTasks","params":{"page_size":5,"status":2}}`,
		`{"jsonrpc":"2.0","id":null,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","method":"SendMessage","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":[]}`,
		`[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]`, `{"jsonrpc":"2.0","id":{},"method":1}`, `{`, `null`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		srv, err := fuzzServer()
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("POST", "/a2a/jsonrpc", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("A2A-Version", "1.0")
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, r)
		switch {
		case w.Code == 204:
			if w.Body.Len() != 0 {
				t.Fatal("a notification got a body")
			}
		case w.Code != 200:
			t.Fatalf("HTTP %d for %q: %s", w.Code, body, w.Body.Bytes())
		case w.Header().Get("Content-Type") == "text/event-stream":
		default:
			var env struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  json.RawMessage `json:"result"`
				Error   *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.JSONRPC != "2.0" || (env.Result == nil) == (env.Error == nil) {
				t.Fatalf("malformed answer to %q: %s", body, w.Body.Bytes())
			}
			if env.Error != nil && env.Error.Code == -32603 {
				t.Fatalf("internal error for %q: %s", body, w.Body.Bytes())
			}
		}
	})
}
