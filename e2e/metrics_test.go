package e2e

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/server"
)

// scrape fetches url and returns the exposition text.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET %s: %d %s\n%s", url, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return string(b)
}

// TestMetrics drives one ask story and reads it back from /metrics:
// requests by route template (never by id), 429s, the ask-network
// counters (whether an agent or the operator acted), the store's gauges
// and bbolt's statistics.
func TestMetrics(t *testing.T) {
	h := start(t, func(c *server.Config) { c.AskRate = 1 })
	ctx := context.Background()
	_, ac := h.agent("alice")
	_, bc := h.agent("bob")
	tk := h.ask(ac, "m-1", "How do I scrape kfa?")
	if _, err := ac.SendMessage(ctx, askReq("m-2", "Second question too soon", nil)); err == nil {
		t.Fatal("the second ask within a minute was not rate limited")
	}
	if _, err := ac.GetTask(ctx, tk.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bc.Reply(ctx, discussionOf(t, tk), "Point Prometheus at /metrics."); err != nil {
		t.Fatal(err)
	}
	other := h.ask(bc, "m-3", "A question to cancel")
	if _, err := h.admin.AdminCancelTask(ctx, other.ID); err != nil { // the operator's cancel counts too
		t.Fatal(err)
	}
	h.raw("GET", "/no/such/route/"+tk.ID, nil, "")

	_ = scrape(t, h.url+"/metrics")
	text := scrape(t, h.url+"/metrics")
	for _, want := range []string{
		`kfa_http_requests_total{code="200",method="GET",route="/a2a/v1/tasks/{id}"} 1`,
		`kfa_http_requests_total{code="200",method="POST",route="/a2a/v1/message:send"} 2`,
		`kfa_http_requests_total{code="429",method="POST",route="/a2a/v1/message:send"} 1`,
		`kfa_http_requests_total{code="201",method="POST",route="/api/v1/discussions/{id}/replies"} 1`,
		`kfa_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`kfa_http_requests_total{code="200",method="GET",route="/metrics"} 1`,
		`kfa_http_request_duration_seconds_count{method="POST",route="/a2a/v1/message:send"} 3`,
		`kfa_rate_limited_total{route="/a2a/v1/message:send"} 1`,
		`kfa_asks_total 2`,
		`kfa_replies_total{qualifying="true"} 1`,
		`kfa_replies_total{qualifying="false"} 0`,
		`kfa_task_completions_total 1`,
		`kfa_task_cancels_total 1`,
		`kfa_tasks{state="TASK_STATE_COMPLETED"} 1`,
		`kfa_tasks{state="TASK_STATE_CANCELED"} 1`,
		`kfa_tasks{state="TASK_STATE_WORKING"} 0`,
		`kfa_discussions{status="answered"} 1`,
		`kfa_discussions{status="open"} 1`,
		`kfa_agents 2`,
		`kfa_build_info{version="dev"} 1`,
		`kfa_bbolt_open_read_tx 0`,
		"\nkfa_bbolt_writes_total ",
		"\nkfa_bbolt_read_tx_total ",
		"\nkfa_db_size_bytes ",
		"\ngo_goroutines ",
	} {
		if onPostgres() && (strings.Contains(want, "kfa_bbolt_") || strings.Contains(want, "kfa_db_size_bytes")) {
			continue // the bbolt file's statistics: none on PostgreSQL
		}
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(text, tk.ID) || regexp.MustCompile(`route="[^"]*[0-9A-HJKMNP-TV-Z]{26}`).MatchString(text) {
		t.Error("an id made it into a metric label")
	}
	if !strings.Contains(text, "\nkfa_search_index_lag 0") {
		t.Error("the search index lag is not reported (or not 0 with no records written)")
	}
}

// TestMetricsSeparateAddr: with --metrics-addr, /metrics is served there
// and only there.
func TestMetricsSeparateAddr(t *testing.T) {
	h := start(t, func(c *server.Config) { c.MetricsAddr = "127.0.0.1:0" })
	addr := h.srv.MetricsAddr()
	if addr == "" {
		t.Fatal("no metrics listener")
	}
	if resp, _ := h.raw("GET", "/metrics", nil, ""); resp.StatusCode != 404 {
		t.Fatalf("/metrics on the public listener: %d", resp.StatusCode)
	}
	if text := scrape(t, "http://"+addr+"/metrics"); !strings.Contains(text, "kfa_build_info") {
		t.Fatalf("metrics listener:\n%s", text)
	}
	resp, err := http.Post("http://"+addr+"/metrics", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /metrics: %d", resp.StatusCode)
	}
	if resp, _ := h.raw("GET", "/healthz", nil, ""); resp.StatusCode != 200 {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
	if text := scrape(t, "http://"+addr+"/metrics"); !strings.Contains(text, `kfa_http_requests_total{code="200",method="GET",route="/healthz"} 1`) {
		t.Fatalf("requests to the public listener are not counted:\n%s", text)
	}
}

func TestMetricsAddrValidated(t *testing.T) {
	cfg := server.DefaultConfig()
	cfg.MetricsAddr = "9090"
	if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), "metrics-addr:") {
		t.Fatalf("Validate: %v", err)
	}
}
