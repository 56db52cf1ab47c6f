package metrics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
)

func family(t *testing.T, m *Metrics, name string) *dto.MetricFamily {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return f
		}
	}
	return nil
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func TestInstrumentLabels(t *testing.T) {
	m := New("test")
	h := m.Instrument(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/limited":
			w.WriteHeader(http.StatusTooManyRequests)
		case "/quiet":
			// writes nothing: 200
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}), func(r *http.Request) string {
		if r.URL.Path == "/unknown" {
			return ""
		}
		return "/tpl" + r.URL.Path
	})
	for _, req := range []struct{ method, path string }{
		{"GET", "/limited"}, {"GET", "/quiet"}, {"POST", "/x"}, {"BREW", "/x"}, {"GET", "/unknown"},
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(req.method, req.path, nil))
	}
	got := map[string]float64{}
	for _, mt := range family(t, m, "kfa_http_requests_total").GetMetric() {
		l := labels(mt)
		got[l["route"]+" "+l["method"]+" "+l["code"]] = mt.GetCounter().GetValue()
	}
	want := map[string]float64{
		"/tpl/limited GET 429": 1, "/tpl/quiet GET 200": 1, "/tpl/x POST 200": 1, "/tpl/x OTHER 200": 1, "unmatched GET 200": 1,
	}
	if len(got) != len(want) {
		t.Fatalf("requests: %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("requests %q = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	rl := family(t, m, "kfa_rate_limited_total").GetMetric()
	if len(rl) != 1 || labels(rl[0])["route"] != "/tpl/limited" || rl[0].GetCounter().GetValue() != 1 {
		t.Fatalf("rate limited: %v", rl)
	}
	if f := family(t, m, "kfa_http_requests_in_flight"); f.GetMetric()[0].GetGauge().GetValue() != 0 {
		t.Fatal("in-flight gauge did not come back to 0")
	}
}

func TestIndexLagHook(t *testing.T) {
	m := New("test")
	if family(t, m, "kfa_search_index_lag") != nil {
		t.Fatal("index lag reported before a hook is set")
	}
	lag, fail := int64(42), false
	m.SetIndexLag(func() (int64, error) {
		if fail {
			return 0, errors.New("index closed")
		}
		return lag, nil
	})
	if v := family(t, m, "kfa_search_index_lag").GetMetric()[0].GetGauge().GetValue(); v != 42 {
		t.Fatalf("lag = %v", v)
	}
	fail = true
	if v := family(t, m, "kfa_search_index_lag").GetMetric()[0].GetGauge().GetValue(); v != -1 {
		t.Fatalf("lag on error = %v, want -1", v)
	}
}

// TestDomainStaysFreeOfMetrics: the domain packages count nothing
// themselves; prometheus and net/http stay out of their imports.
func TestDomainStaysFreeOfMetrics(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/kfa-project/kfa/tasks", "github.com/kfa-project/kfa/discussions").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "net/http" || strings.HasPrefix(dep, "github.com/prometheus/") || dep == "go.etcd.io/bbolt" {
			t.Errorf("a domain package depends on %s", dep)
		}
	}
}

var _ prometheus.Collector = (*storeCollector)(nil)

// TestFollowerCounts: the ask-network counters come from the change log's
// events, a reply's qualifying label from the event's note.
func TestFollowerCounts(t *testing.T) {
	m := New("test")
	evs := []changelog.Event{
		{Kind: changelog.TaskCreated}, {Kind: changelog.TaskCreated}, {Kind: changelog.DiscussionOpened},
		{Kind: changelog.DiscussionReplied, Note: changelog.NoteQualifying},
		{Kind: changelog.TaskMoved, Ref: string(a2a.TaskStateCompleted)},
		{Kind: changelog.TaskMoved, Ref: string(a2a.TaskStateCompleted)},
		{Kind: changelog.DiscussionReplied},
		{Kind: changelog.TaskMoved, Ref: string(a2a.TaskStateCanceled)},
		{Kind: changelog.RecordUpserted}, {Kind: changelog.AgentRevoked},
	}
	if err := m.Follower().Apply(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	value := func(name, qualifying string) float64 {
		f := family(t, m, name)
		if f == nil {
			t.Fatalf("no %s", name)
		}
		for _, x := range f.GetMetric() {
			if qualifying == "" || labels(x)["qualifying"] == qualifying {
				return x.GetCounter().GetValue()
			}
		}
		t.Fatalf("no %s{qualifying=%q}", name, qualifying)
		return 0
	}
	for _, c := range []struct {
		name, qualifying string
		want             float64
	}{
		{"kfa_asks_total", "", 2},
		{"kfa_replies_total", "true", 1},
		{"kfa_replies_total", "false", 1},
		{"kfa_task_completions_total", "", 2},
		{"kfa_task_cancels_total", "", 1},
	} {
		if got := value(c.name, c.qualifying); got != c.want {
			t.Errorf("%s{%s}: %v, want %v", c.name, c.qualifying, got, c.want)
		}
	}
}

// TestFollowerCountsModeration: flags by reason, hides by who hid, and
// unhides, from the log's item events.
func TestFollowerCountsModeration(t *testing.T) {
	m := New("test")
	evs := []changelog.Event{
		{Kind: changelog.ItemFlagged, Note: "spam"}, {Kind: changelog.ItemFlagged, Note: "spam"},
		{Kind: changelog.ItemFlagged, Note: "wrong"},
		{Kind: changelog.ItemHidden, Note: changelog.NoteByFlags},
		{Kind: changelog.ItemHidden, Note: changelog.NoteByModerator}, {Kind: changelog.ItemHidden, Note: changelog.NoteByModerator},
		{Kind: changelog.ItemUnhidden},
	}
	if err := m.Follower().Apply(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	value := func(name, label, v string) float64 {
		t.Helper()
		f := family(t, m, name)
		if f == nil {
			t.Fatalf("no %s", name)
		}
		for _, x := range f.GetMetric() {
			if label == "" || labels(x)[label] == v {
				return x.GetCounter().GetValue()
			}
		}
		t.Fatalf("no %s{%s=%q}", name, label, v)
		return 0
	}
	for _, c := range []struct {
		name, label, v string
		want           float64
	}{
		{"kfa_moderation_flags_total", "reason", "spam", 2},
		{"kfa_moderation_flags_total", "reason", "wrong", 1},
		{"kfa_moderation_hides_total", "by", "flags", 1},
		{"kfa_moderation_hides_total", "by", "moderator", 2},
		{"kfa_moderation_unhides_total", "", "", 1},
	} {
		if got := value(c.name, c.label, c.v); got != c.want {
			t.Errorf("%s{%s=%s}: %v, want %v", c.name, c.label, c.v, got, c.want)
		}
	}
}
