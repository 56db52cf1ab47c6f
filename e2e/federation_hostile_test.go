package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/server"
)

// hostilePeer is a loopback server that shows a valid agent card and
// answers its change feed (and any A2A call) as mode says: "500",
// "stall" (until the client gives up), "huge" (a gigabyte of bytes),
// "garbage" (not JSON), "invalid" (a JSON page whose documents break
// every rule, and one good record). It counts what it wrote to each
// feed request.
type hostilePeer struct {
	srv  *httptest.Server
	mode string

	mu      sync.Mutex
	written []int64 // bytes written to each feed request
}

func newHostilePeer(t *testing.T, mode string) *hostilePeer {
	t.Helper()
	h := &hostilePeer{mode: mode}
	stop := make(chan struct{})
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve(stop)))
	t.Cleanup(h.srv.Close)
	t.Cleanup(func() { close(stop) }) // runs first: stalled handlers return
	return h
}

func (h *hostilePeer) serve(stop <-chan struct{}) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/agent-card.json" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"name":"hostile %s","version":"1","supportedInterfaces":[{"url":%q,"protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`,
				h.mode, h.srv.URL+"/a2a")
			return
		}
		var n int64
		defer func() {
			if r.URL.Path == "/api/v1/changes" {
				h.mu.Lock()
				h.written = append(h.written, n)
				h.mu.Unlock()
			}
		}()
		switch h.mode {
		case "500":
			http.Error(w, `{"error":{"code":500,"status":"INTERNAL","message":"boom"}}`, http.StatusInternalServerError)
		case "stall":
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		case "huge":
			w.Header().Set("Content-Type", "application/json")
			chunk := []byte(`{"changes":[` + strings.Repeat(`"xxxxxxxxxxxxxxx",`, 4096))
			for n < 1<<30 {
				k, err := w.Write(chunk)
				n += int64(k)
				if err != nil {
					return
				}
			}
		case "garbage":
			k, _ := w.Write([]byte("<html>this is not a change feed{{{\x00\xff"))
			n = int64(k)
		case "invalid":
			b, _ := json.Marshal(map[string]any{
				"server": h.srv.URL, "nextCursor": "c1", "hasMore": false,
				"changes": []map[string]any{
					{"source": "record", "id": "../../etc/passwd", "op": "upsert", "url": h.srv.URL + "/r/1", "at": "2026-12-01T00:00:00Z",
						"record": map[string]any{"id": "../../etc/passwd", "kind": "howto", "title": "bad id", "body": "x"}},
					{"source": "record", "id": "too-big", "op": "upsert", "url": h.srv.URL + "/records/too-big", "at": "2026-12-01T00:00:00Z",
						"record": map[string]any{"id": "too-big", "kind": "howto", "title": "Oversized ocelot", "body": strings.Repeat("ocelot ", 2000)}},
					{"source": "record", "id": "bad-time", "op": "upsert", "url": h.srv.URL + "/records/bad-time", "at": "yesterday",
						"record": map[string]any{"id": "bad-time", "kind": "howto", "title": "Timeless tapir", "body": "x"}},
					{"source": "pony", "id": "p1", "op": "explode", "url": "javascript:alert(1)", "at": "2026-12-01T00:00:00Z"},
					{"source": "record", "id": "good-one", "op": "upsert", "url": h.srv.URL + "/records/good-one", "at": "2026-12-01T00:00:00Z",
						"record": map[string]any{"id": "good-one", "kind": "howto", "title": "Groom a gentle gecko", "body": "With a soft brush."}},
				},
			})
			w.Header().Set("Content-Type", "application/json")
			k, _ := w.Write(b)
			n = int64(k)
		}
	}
}

// feedWrites is what h wrote to each feed request so far.
func (h *hostilePeer) feedWrites() []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.written)
}

// p50 is the median of ds.
func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// p99 is the 99th percentile of ds.
func p99(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*99/100)]
}

// TestFederationHostilePeers: a server that follows peers that answer
// 500s, stall, send a gigabyte, send garbage, send documents that break
// every rule, or are down, and forwards asks to the stalling one and the
// 500 one: its local searches and asks keep their latency (p99 measured
// with a healthy peer only, while a peer's request stalls, and once every
// peer is failing and retried); every such peer is failing with its error; what
// a peer wrote to one feed request is bounded by the page limit, not by
// what the peer sends; the one valid document of the invalid page is
// followed, the rest left out.
func TestFederationHostilePeers(t *testing.T) {
	a := startPeer(t, func(c *server.Config) { c.AskRate, c.MaxOpenTasks = 0, 0 })
	ctx := context.Background()
	_, alice := a.agent("alice-hostile")
	i := 0
	measure := func(n int) []time.Duration {
		out := make([]time.Duration, 0, n)
		for range n {
			i++
			start := time.Now()
			if i%2 == 0 {
				searchHits(t, a, "pangolin gloves")
			} else {
				a.ask(alice, fmt.Sprintf("hostile-%d", i), fmt.Sprintf("How do I keep peer number %d polite?", i))
			}
			out = append(out, time.Since(start))
		}
		return out
	}
	// The baseline has a healthy peer that A follows and forwards to, so
	// that before and after differ only by the peers that misbehave.
	good := startPeer(t, func(c *server.Config) { c.AskRate, c.MaxOpenTasks = 0, 0 })
	addPeer(t, a, good, "good", true)
	before := measure(200)

	const docBytes = 4096
	modes := []string{"500", "stall", "huge", "garbage", "invalid", "down"}
	hostile := map[string]*hostilePeer{}
	for _, m := range modes {
		hp := newHostilePeer(t, m)
		hostile[m] = hp
		name := "h" + m
		if _, err := a.admin.AddPeer(ctx, api.PeerAddRequest{Name: name, URL: hp.srv.URL, Token: "t0ken-" + m,
			ForwardAsks: m == "stall" || m == "500", MaxDocBytes: docBytes}); err != nil {
			t.Fatalf("add %s: %v", name, err)
		}
		if m == "down" {
			hp.srv.Close()
		}
	}
	// While the stalled requests are in flight (a peer's request times
	// out after 15 s), and once every peer is failing and retried with
	// backoff: the same local requests, as many as before.
	during := measure(len(before))
	eventually(t, 25*time.Second, "every hostile peer failing", func() bool {
		for _, m := range modes {
			if p := peerOf(t, a, "h"+m); p.State != "failing" || p.LastError == "" {
				return false
			}
		}
		return true
	})
	after := measure(len(before))
	for _, m := range modes {
		p := peerOf(t, a, "h"+m)
		t.Logf("peer h%s: %s, %q", m, p.State, p.LastError)
	}
	// A local request that waited on a peer would take seconds (the
	// peers' timeouts); the bound leaves room for a loaded machine.
	for _, c := range []struct {
		name string
		ds   []time.Duration
	}{{"before", before}, {"while a peer stalls", during}, {"while every peer fails", after}} {
		t.Logf("local requests %s: p50 %s, p99 %s (%d requests)", c.name, p50(c.ds), p99(c.ds), len(c.ds))
		if p99(c.ds) > 3*p99(before)+250*time.Millisecond {
			t.Errorf("local p99 %s %s, %s before", p99(c.ds), c.name, p99(before))
		}
	}

	// Bounded work: no feed read took more than a page's limit (plus
	// what the socket buffers), however much the peer had to send.
	for _, n := range hostile["huge"].feedWrites() {
		if n > 64<<20 {
			t.Errorf("a feed read of the huge peer took %d bytes", n)
		}
	}
	if len(hostile["huge"].feedWrites()) == 0 {
		t.Error("the huge peer was never read")
	}
	if h := hitOf(searchHits(t, a, "gentle gecko"), "Groom a gentle gecko"); h == nil || h.Origin == nil || h.Origin.Peer != "hinvalid" {
		t.Errorf("the valid record of the invalid page: %+v", h)
	}
	for _, q := range []string{"oversized ocelot", "timeless tapir", "bad id"} {
		for _, h := range searchHits(t, a, q) {
			if h.Origin != nil {
				t.Errorf("an invalid document was followed: %+v", h)
			}
		}
	}
}
