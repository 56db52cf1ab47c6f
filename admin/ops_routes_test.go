package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/admin"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/server"
)

func handler(t *testing.T, lag func(context.Context) (int64, error)) *admin.Handler {
	t.Helper()
	core, err := server.OpenCore(server.CoreOptions{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = core.Close() })
	return admin.NewHandler(admin.Deps{Operator: core.Operator(),
		Store: server.AdminStore(core.DB), IndexLag: lag, Log: slog.New(slog.DiscardHandler), Mode: "direct"})
}

// TestStatsIndexLag: the search index fills IndexLag; stats report it,
// and its failure is the request's.
func TestStatsIndexLag(t *testing.T) {
	get := func(h http.Handler) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/admin/v1/stats", nil))
		return rec
	}
	rec := get(handler(t, func(context.Context) (int64, error) { return 7, nil }))
	var st api.Stats
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || rec.Code != 200 || st.IndexLag == nil || *st.IndexLag != 7 {
		t.Fatalf("stats with a lag hook: %d %s", rec.Code, rec.Body)
	}
	rec = get(handler(t, nil))
	if !strings.Contains(rec.Body.String(), `"indexLag":null`) {
		t.Fatalf("stats without a hook: %s", rec.Body)
	}
	rec = get(handler(t, func(context.Context) (int64, error) { return 0, errors.New("index closed") }))
	if rec.Code != 500 {
		t.Fatalf("stats with a failing hook: %d %s", rec.Code, rec.Body)
	}
}

// TestBackupStreamsExactSize: the backup answer says its length up front.
func TestBackupStreamsExactSize(t *testing.T) {
	rec := httptest.NewRecorder()
	handler(t, nil).ServeHTTP(rec, httptest.NewRequest("GET", "/admin/v1/backup", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Length") == "" || rec.Header().Get("Content-Length") != itoa(rec.Body.Len()) ||
		rec.Header().Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("backup: %d %v (%d bytes)", rec.Code, rec.Header(), rec.Body.Len())
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestOpsRoutesWithoutStore(t *testing.T) {
	h := admin.NewHandler(admin.Deps{Log: slog.New(slog.DiscardHandler)})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/admin/v1/check", nil))
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "has no store") {
		t.Fatalf("check without a store: %d %s", rec.Code, rec.Body)
	}
}
