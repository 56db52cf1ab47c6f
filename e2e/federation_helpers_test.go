package e2e

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/server"
)

// followWithin is how soon a change on a peer must show on its follower
// (issue 35: within 5 s).
const federationWithin = 5 * time.Second

// freeAddr is a free loopback address: a server of a federation test
// needs its public URL (its own address) before it listens.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// startPeer starts a server whose public URL is its own address, as a
// peer's must be (its followers link to it, and its forwards name it).
func startPeer(t *testing.T, mutate func(*server.Config)) *harness {
	t.Helper()
	addr := freeAddr(t)
	return start(t, func(c *server.Config) {
		c.Addr, c.PublicURL = addr, "http://"+addr
		c.SearchRate = 0
		c.PeerPoll = 200 * time.Millisecond
		if mutate != nil {
			mutate(c)
		}
	})
}

// searchHit is a search result as the A2A search answer shows it.
type searchHit struct {
	ID      string `json:"id"`
	Source  string `json:"source"`
	Title   string `json:"title"`
	PageURL string `json:"pageUrl"`
	Origin  *struct {
		Peer string `json:"peer"`
		URL  string `json:"url"`
	} `json:"origin"`
}

// searchHits runs an A2A search of q on h.
func searchHits(t *testing.T, h *harness, q string) []searchHit {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"action": "search", "query": q, "limit": 5})
	res, err := h.anon.SendMessage(context.Background(), dataMessage(b))
	if err != nil || res.Message == nil {
		t.Fatalf("A2A search %s: %v", b, err)
	}
	var out struct {
		Results []searchHit `json:"results"`
	}
	for _, p := range res.Message.Parts {
		if p.Data != nil {
			if err := json.Unmarshal(p.Data, &out); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out.Results
}

// eventually waits until cond holds, at most within, checking often; it
// fails saying what did not happen, and returns how long it took.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		if cond() {
			return time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// addPeer makes an agent on b for a's server (read and post), and adds
// b as a peer of a named name.
func addPeer(t *testing.T, a, b *harness, name string, forward bool) api.Peer {
	t.Helper()
	_, port, _ := net.SplitHostPort(a.cfg.Addr)
	ag, err := b.admin.CreateAgent(context.Background(), "kfa-"+port+"-as-"+name, []string{"read", "post"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.admin.AddPeer(context.Background(), api.PeerAddRequest{Name: name, URL: b.url, Token: ag.Token, ForwardAsks: forward})
	if err != nil {
		t.Fatalf("add peer %s: %v", name, err)
	}
	return p
}

// peerOf is a's peer name, from its list.
func peerOf(t *testing.T, a *harness, name string) api.Peer {
	t.Helper()
	l, err := a.admin.Peers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Peers {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no peer %s", name)
	return api.Peer{}
}
