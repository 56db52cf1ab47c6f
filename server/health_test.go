package server

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// refusedWrites is a store error that says why it refuses writes.
type refusedWrites struct{}

func (refusedWrites) Error() string {
	return "postgres: writes refused (--require-sync-replica): no standby"
}
func (refusedWrites) WritesRefused() string { return "no standby is streaming from the primary" }

// TestReadyzSaysLittle: /readyz is public, so it names no user, host or
// port of the database, whatever the driver's error holds; the log keeps
// the detail, once per change of state, and says when the process is
// ready again.
func TestReadyzSaysLittle(t *testing.T) {
	driver := errors.New("postgres: failed to connect to `user=kfa database=kfa`: 10.1.2.3:5433 (db1.internal): dial error: connection refused")
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{"unreachable", "not ready: database unreachable", storeNotReady(driver)},
		{"no synchronous standby", "not ready: no synchronous standby: no standby is streaming from the primary", storeNotReady(refusedWrites{})},
		{"starting", "not ready: starting or shutting down", &notReady{Public: notReadyStarting}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			var err error = tc.err
			h := health{ready: func() error { return err }, log: slog.New(slog.NewTextHandler(&logs, nil)), seen: &readyState{}}
			probe := func() (int, string) {
				w := httptest.NewRecorder()
				h.readyz(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
				return w.Code, w.Body.String()
			}
			for range 3 {
				code, body := probe()
				if code != http.StatusServiceUnavailable || !strings.Contains(body, `"message":"`+tc.want+`"`) {
					t.Fatalf("/readyz: %d %s; want 503 saying %q", code, body, tc.want)
				}
				for _, leak := range []string{"kfa", "10.1.2.3", "5433", "db1"} {
					if strings.Contains(body, leak) {
						t.Fatalf("/readyz names %q: %s", leak, body)
					}
				}
			}
			err = nil
			if code, _ := probe(); code != http.StatusOK {
				t.Fatalf("/readyz once ready: %d", code)
			}
			out := logs.String()
			if tc.err.(*notReady).Detail == nil {
				if out != "" {
					t.Fatalf("starting is logged by the server itself, not by each probe:\n%s", out)
				}
				return
			}
			if strings.Count(out, "not ready") != 1 || !strings.Contains(out, tc.err.(*notReady).Detail.Error()[:20]) || !strings.Contains(out, "ready again") {
				t.Fatalf("the log should say once why the process was not ready, with the detail, and that it is again:\n%s", out)
			}
		})
	}
}
