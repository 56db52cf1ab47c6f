package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/kfa-project/kfa/internal/prototest"
	"github.com/kfa-project/kfa/server"
	"github.com/kfa-project/kfa/service"
)

// keyTransport sends a token in X-API-Key instead of a bearer.
type keyTransport struct{ token string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-API-Key", k.token)
	return http.DefaultTransport.RoundTrip(r)
}

// callerOf returns the caller extension's params of an extended card.
func callerOf(t *testing.T, exts []map[string]any) service.CallerInfo {
	t.Helper()
	for _, e := range exts {
		if e["uri"] == service.CallerExtensionURI {
			var ci service.CallerInfo
			b, _ := json.Marshal(e["params"])
			if err := json.Unmarshal(b, &ci); err != nil {
				t.Fatal(err)
			}
			return ci
		}
	}
	t.Fatalf("no caller extension in %v", exts)
	return service.CallerInfo{}
}

// TestExtendedCard: the extended card tells the caller its scopes, limits
// and what is left of each, read from the same windows and counters the
// limits check; an anonymous caller gets what it may use anonymously.
func TestExtendedCard(t *testing.T) {
	h := start(t, func(c *server.Config) {
		c.AskRate, c.MaxOpenTasks, c.ReplyRate, c.MaxReplies, c.SearchRate, c.RequestRate = 3, 10, 4, 50, 20, 100
	})
	alice, ac := h.agent("alice")
	reader, _ := h.agent("reader", "read")
	get := func(tok string) (*http.Response, service.CallerInfo) {
		t.Helper()
		resp, body := h.raw("GET", "/a2a/v1/extendedAgentCard", a2aHeaders(tok), "")
		if resp.StatusCode != 200 {
			return resp, service.CallerInfo{}
		}
		var card struct {
			Capabilities struct {
				Extensions []map[string]any `json:"extensions"`
			} `json:"capabilities"`
		}
		if err := json.Unmarshal(body, &card); err != nil {
			t.Fatal(err)
		}
		return resp, callerOf(t, card.Capabilities.Extensions)
	}

	resp, ci := get(alice.Token)
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("extended card: %d %v", resp.StatusCode, resp.Header)
	}
	l := ci.Limits
	if ci.AgentID != alice.ID || ci.Name != "alice" || mustJSON(ci.Scopes) != `["read","post"]` ||
		mustJSON(ci.Skills) != `["knowledge-search","ask-network","answer-feedback"]` ||
		l.Asks == nil || *l.Asks != (service.RateStatus{Limit: 3, WindowSeconds: 60, Remaining: 3}) ||
		l.OpenTasks == nil || *l.OpenTasks != (service.CountStatus{Limit: 10, Used: 0, Remaining: 10}) ||
		l.Replies == nil || l.Replies.Limit != 4 || l.Replies.Remaining != 4 ||
		l.Searches == nil || l.Searches.Limit != 20 || l.Searches.Remaining != 20 ||
		l.Requests == nil || l.Requests.Limit != 100 || l.Requests.Remaining < 98 ||
		l.RepliesPerDiscussion == nil || *l.RepliesPerDiscussion != 50 {
		t.Fatalf("fresh caller: %s", mustJSON(ci))
	}

	// After two asks: one ask left, two open tasks; a cancel frees one.
	first := h.ask(ac, "x-1", "What does the extended card say?")
	h.ask(ac, "x-2", "And after a second ask?")
	_, ci = get(alice.Token)
	if l = ci.Limits; l.Asks.Remaining != 1 || l.Asks.ResetSeconds != 40 || l.OpenTasks.Used != 2 || l.OpenTasks.Remaining != 8 {
		t.Fatalf("after two asks: %s", mustJSON(ci.Limits))
	}
	if _, err := ac.CancelTask(context.Background(), first.ID); err != nil {
		t.Fatal(err)
	}
	if _, ci = get(alice.Token); ci.Limits.OpenTasks.Used != 1 {
		t.Fatalf("after a cancel: %s", mustJSON(ci.Limits))
	}
	// A read-only agent cannot ask, and its card says so.
	if _, ci = get(reader.Token); mustJSON(ci.Skills) != `["knowledge-search"]` || mustJSON(ci.Scopes) != `["read"]` {
		t.Fatalf("reader: %s", mustJSON(ci))
	}
	// Without a credential: the card an anonymous caller may use (the
	// skills that need no token, its address's search limit); a bad token
	// is still refused.
	resp, ci = get("")
	if resp.StatusCode != 200 || ci.Authenticated || ci.AgentID != "" || mustJSON(ci.Scopes) != `[]` ||
		mustJSON(ci.Skills) != `["knowledge-search"]` || ci.Limits.Searches == nil || ci.Limits.Searches.Limit != 20 ||
		ci.Limits.Asks != nil || ci.Limits.Requests != nil || ci.Limits.OpenTasks != nil {
		t.Fatalf("anonymous: %d %s", resp.StatusCode, mustJSON(ci))
	}
	if resp, _ = get("kfa_bad"); resp.StatusCode != 401 ||
		!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), `Bearer realm="kfa", error="invalid_token"`) {
		t.Fatalf("bad token: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestSDKExtendedCard: the official SDK v2.3.1 fetches the extended card
// over HTTP+JSON and JSON-RPC, with the token in either header.
func TestSDKExtendedCard(t *testing.T) {
	h := start(t, nil)
	alice, _ := h.agent("alice")
	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, h.url)
	if err != nil {
		t.Fatalf("the SDK cannot read kfa's card: %v", err)
	}
	if !card.Capabilities.ExtendedAgentCard {
		t.Fatal("the SDK does not see capabilities.extendedAgentCard")
	}
	for _, iface := range card.SupportedInterfaces {
		iface.URL = replacePrefix(iface.URL, h.cfg.PublicURL, h.url)
	}
	for _, binding := range []sdk.TransportProtocol{sdk.TransportProtocolHTTPJSON, sdk.TransportProtocolJSONRPC} {
		for name, rt := range map[string]http.RoundTripper{"bearer": bearerTransport{token: alice.Token}, "X-API-Key": keyTransport{token: alice.Token}} {
			hc := &http.Client{Transport: rt}
			c, err := a2aclient.NewFromCard(ctx, card,
				a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []sdk.TransportProtocol{binding}}),
				a2aclient.WithRESTTransport(hc), a2aclient.WithJSONRPCTransport(hc))
			if err != nil {
				t.Fatalf("%s/%s: %v", binding, name, err)
			}
			ext, err := c.GetExtendedAgentCard(ctx, &sdk.GetExtendedAgentCardRequest{})
			_ = c.Destroy()
			if err != nil {
				t.Fatalf("%s/%s: GetExtendedAgentCard: %v", binding, name, err)
			}
			var exts []map[string]any
			for _, e := range ext.Capabilities.Extensions {
				exts = append(exts, map[string]any{"uri": e.URI, "params": e.Params})
			}
			if ci := callerOf(t, exts); ci.Name != "alice" || ext.Name != "kfa" {
				t.Fatalf("%s/%s: extended card for %q", binding, name, ci.Name)
			}
		}
	}
}

// cardOutcome is an extended card as "card <caller's name>" ("card
// anonymous" without a credential), the same in the 1.0 and 0.3 shapes
// (both carry capabilities.extensions).
func cardOutcome(t *testing.T, raw []byte) outcome {
	t.Helper()
	var c struct {
		Capabilities struct {
			Extensions []struct {
				URI    string `json:"uri"`
				Params struct {
					Authenticated bool   `json:"authenticated"`
					Name          string `json:"name"`
				} `json:"params"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("extended card: %v: %s", err, raw)
	}
	for _, e := range c.Capabilities.Extensions {
		if e.URI == service.CallerExtensionURI {
			if !e.Params.Authenticated {
				return outcome{kind: "card", state: "anonymous"}
			}
			return outcome{kind: "card", state: e.Params.Name}
		}
	}
	t.Fatalf("extended card without the caller extension: %s", raw)
	return outcome{}
}

// The extended card over each binding of the scenario table (bindings_test.go).

func (b restBinding) extendedCard(token string) outcome {
	raw, st := b.do("GET", "/a2a/v1/extendedAgentCard", token, "")
	if st != 200 {
		return restOutcome(b.t, raw, st, "")
	}
	prototest.Valid(b.t, prototest.AgentCard, raw)
	return cardOutcome(b.t, raw)
}

func (b *rpcBinding) extendedCard(token string) outcome {
	m := "GetExtendedAgentCard"
	if b.v03 {
		m = "agent/getAuthenticatedExtendedCard"
	}
	res, r := b.call(token, m, nil)
	if r != "" {
		return outcome{kind: "error", reason: r}
	}
	if !b.v03 {
		prototest.Valid(b.t, prototest.AgentCard, res)
	}
	return cardOutcome(b.t, res)
}
