package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/server"
)

// TestHostileInput adds to the bad-input table: huge and deeply nested
// values, unknown part shapes, forged and reused page tokens, revoked
// tokens, and every route with a method it does not take. Each gets its
// exact status and reason, never a 5xx, and the store stays unchanged.
func TestHostileInput(t *testing.T) {
	h := start(t, func(c *serverConfig) { c.MaxBodyBytes = 64 << 10 })
	alice, ac := h.agent("alice")
	revoked, _ := h.agent("mallory")
	if _, err := h.admin.RevokeAgent(bg(), revoked.ID); err != nil {
		t.Fatal(err)
	}
	tk := h.ask(ac, "a1", "hostile")
	disc := discussionOf(t, tk)
	for i := range 3 {
		h.ask(ac, fmt.Sprintf("a%d", i+2), "more")
	}
	page, err := ac.ListTasks(bg(), map[string][]string{"pageSize": {"1"}})
	if err != nil || page.NextPageToken == "" {
		t.Fatalf("need a page token: %+v %v", page, err)
	}
	tok := alice.Token
	ok := a2aHeaders(tok)
	send := "/a2a/v1/message:send"
	msg := func(parts string) string {
		return `{"message":{"role":"ROLE_USER","messageId":"h1","parts":` + parts + `}}`
	}
	manyParts := "[" + strings.TrimSuffix(strings.Repeat(`{"text":"x"},`, 17), ",") + "]"
	deepMeta := strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65)
	cases := []badCase{
		{"seventeen parts", "POST", send, ok, msg(manyParts), 400, "INVALID_PARAMS"},
		{"deep metadata", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"h","metadata":` + deepMeta + `,"parts":[{"text":"x"}]}}`, 400, "INVALID_PARAMS"},
		{"huge string over the body limit", "POST", send, ok, msg(`[{"text":"` + strings.Repeat("x", 70<<10) + `"}]`), 413, "PAYLOAD_TOO_LARGE"},
		{"huge array over the body limit", "POST", send, ok, msg("[" + strings.Repeat("1,", 40<<10) + "1]"), 413, "PAYLOAD_TOO_LARGE"},
		{"parts of numbers", "POST", send, ok, msg(`[1,2,3]`), 400, "INVALID_PARAMS"},
		{"0.3 file part on 1.0", "POST", send, ok, msg(`[{"kind":"file","file":{"uri":"http://x"}}]`), 400, "INVALID_PARAMS"},
		{"part with null data", "POST", send, ok, msg(`[{"data":null}]`), 400, "INVALID_PARAMS"},
		{"part text not a string", "POST", send, ok, msg(`[{"text":{"a":1}}]`), 400, "INVALID_PARAMS"},
		{"raw not base64", "POST", send, ok, msg(`[{"raw":"!!!"}]`), 400, "INVALID_PARAMS"},
		{"role number", "POST", send, ok, `{"message":{"role":1,"messageId":"h","parts":[{"text":"x"}]}}`, 400, "INVALID_PARAMS"},
		{"message id too long", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"` + strings.Repeat("m", 129) + `","parts":[{"data":{"action":"ask","question":"q"}}]},"configuration":{"returnImmediately":true}}`, 400, "INVALID_PARAMS"},
		{"context id too long", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"hx","contextId":"` + strings.Repeat("c", 129) + `","parts":[{"data":{"action":"ask","question":"q"}}]},"configuration":{"returnImmediately":true}}`, 400, "INVALID_PARAMS"},
		{"details too long", "POST", send, a2aHeaders(tok), `{"message":{"role":"ROLE_USER","messageId":"hy","parts":[{"data":{"action":"ask","question":"q","details":"` + strings.Repeat("d", 20001) + `"}}]},"configuration":{"returnImmediately":true}}`, 400, "INVALID_PARAMS"},
		{"question with bidi escape", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"hz","parts":[{"data":{"action":"ask","question":"a\u0085b"}}]},"configuration":{"returnImmediately":true}}`, 400, "INVALID_PARAMS"},
		{"skill not a string", "POST", send, ok, msg(`[{"data":{"skill":["knowledge-search"]}}]`), 400, "INVALID_PARAMS"},
		{"skill and action disagree", "POST", send, ok, msg(`[{"data":{"skill":"knowledge-search","action":"ask"}}]`), 400, "INVALID_PARAMS"},
		{"metadata skill unknown", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"h","metadata":{"skill":"rm -rf"},"parts":[{"text":"x"}]}}`, 400, "INVALID_PARAMS"},
		{"context id in query too long", "GET", "/a2a/v1/tasks?contextId=" + strings.Repeat("c", 200), ok, "", 400, "INVALID_PARAMS"},
		{"NUL in status", "GET", "/a2a/v1/tasks?status=%00", ok, "", 400, "INVALID_PARAMS"},
		{"huge page size", "GET", "/a2a/v1/tasks?pageSize=99999999999999999999", ok, "", 400, "INVALID_PARAMS"},
		{"forged page token", "GET", "/a2a/v1/tasks?pageToken=" + flipChar(page.NextPageToken, 5), ok, "", 400, "INVALID_PARAMS"},
		{"page token with other filters", "GET", "/a2a/v1/tasks?status=TASK_STATE_WORKING&pageToken=" + page.NextPageToken, ok, "", 400, "INVALID_PARAMS"},
		{"page token of another listing", "GET", "/api/v1/discussions?pageToken=" + page.NextPageToken, nil, "", 400, "INVALID_PARAMS"},
		{"page token very long", "GET", "/a2a/v1/tasks?pageToken=" + strings.Repeat("A", 2000), ok, "", 400, "INVALID_PARAMS"},
		{"revoked agent's token", "GET", "/a2a/v1/tasks", a2aHeaders(revoked.Token), "", 401, "UNAUTHENTICATED"},
		{"revoked agent asks", "POST", send, a2aHeaders(revoked.Token), `{"message":{"role":"ROLE_USER","messageId":"r","parts":[{"data":{"action":"ask","question":"q"}}]},"configuration":{"returnImmediately":true}}`, 401, "UNAUTHENTICATED"},
		{"revoked agent replies", "POST", "/api/v1/discussions/" + disc + "/replies", a2aHeaders(revoked.Token), `{"body":"x"}`, 401, "UNAUTHENTICATED"},
		{"token in the query is ignored", "GET", "/a2a/v1/tasks?access_token=" + tok, a2aHeaders(""), "", 401, "UNAUTHENTICATED"},
		{"two Authorization schemes", "GET", "/a2a/v1/tasks", a2aHeaders("", "Authorization", "Bearer "+tok+", Basic x"), "", 401, "UNAUTHENTICATED"},
		{"ack a foreign-shaped body", "POST", "/api/v1/inbox:ack", ok, `{"ids":"01JD0000000000000000000000"}`, 400, "INVALID_PARAMS"},
		{"reply body too long", "POST", "/api/v1/discussions/" + disc + "/replies", ok, `{"body":"` + strings.Repeat("r", 20001) + `"}`, 400, "INVALID_PARAMS"},
		{"reply with NUL", "POST", "/api/v1/discussions/" + disc + "/replies", ok, `{"body":"a\u0000b"}`, 400, "INVALID_PARAMS"},
		{"json-rpc path with GET", "GET", "/a2a/jsonrpc", nil, "", 405, "METHOD_NOT_ALLOWED"},
	}
	// Every route, with a method it does not take.
	for _, rt := range []struct {
		path  string
		wrong []string
	}{
		{"/.well-known/agent-card.json", []string{"POST", "DELETE"}},
		{"/healthz", []string{"POST"}},
		{"/readyz", []string{"DELETE"}},
		{send, []string{"PUT", "GET"}},
		{"/a2a/v1/message:stream", []string{"GET"}},
		{"/a2a/v1/tasks", []string{"POST", "DELETE"}},
		{"/a2a/v1/tasks/" + tk.ID, []string{"POST", "PUT", "PATCH"}},
		{"/a2a/v1/tasks/" + tk.ID + ":cancel", []string{"GET", "DELETE"}},
		{"/a2a/v1/tasks/" + tk.ID + ":subscribe", []string{"PUT"}},
		{"/a2a/v1/extendedAgentCard", []string{"POST"}},
		{"/api/v1/discussions", []string{"PUT"}},
		{"/api/v1/discussions/" + disc, []string{"DELETE", "POST"}},
		{"/api/v1/discussions/" + disc + "/replies", []string{"GET", "DELETE"}},
		{"/api/v1/inbox", []string{"POST"}},
		{"/api/v1/inbox:ack", []string{"GET"}},
		{"/api/v1/whoami", []string{"POST"}},
	} {
		for _, m := range rt.wrong {
			cases = append(cases, badCase{fmt.Sprintf("%s %s", m, rt.path), m, rt.path, ok, "", 405, "METHOD_NOT_ALLOWED"})
		}
	}
	runBadCases(t, h, cases)
}

func flipChar(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// rawRequest writes bytes on a fresh connection and reads the status line.
func rawRequest(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("no answer to %q: %v", req, err)
	}
	return strings.TrimSpace(line)
}

func TestMalformedHTTP(t *testing.T) {
	h := start(t, nil)
	addr := strings.TrimPrefix(h.url, "http://")
	before := h.digest()
	for _, tc := range []struct {
		name, req, want string
	}{
		{"header injection by bare CR", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: a\rSet-Cookie: b\r\n\r\n", "HTTP/1.1 400"},
		{"header without a colon", "GET /healthz HTTP/1.1\r\nHost: x\r\nnonsense\r\n\r\n", "HTTP/1.1 400"},
		{"oversized headers", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("b", 64<<10) + "\r\n\r\n", "HTTP/1.1 431"},
		{"bad request line", "FETCH\r\n\r\n", "HTTP/1.1 400"},
		{"conflicting lengths", "POST /a2a/v1/message:send HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", "HTTP/1.1 400"},
		{"smuggling with TE and CL", "POST /a2a/v1/message:send HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "HTTP/1.1 400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rawRequest(t, addr, tc.req); !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got %q, want %s", got, tc.want)
			}
		})
	}
	if h.digest() != before {
		t.Fatal("malformed HTTP changed the store")
	}
}

func TestSlowClientsAreCutOff(t *testing.T) {
	h := start(t, func(c *server.Config) {
		c.ReadHeaderTimeout = 300 * time.Millisecond
		c.ReadTimeout = 600 * time.Millisecond
		c.IdleTimeout = 500 * time.Millisecond
	})
	addr := strings.TrimPrefix(h.url, "http://")
	for _, tc := range []struct{ name, partial string }{
		{"slow headers", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "},
		{"slow body", "POST /a2a/v1/message:send HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"message\":"},
		{"idle keep-alive", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, tc.partial); err != nil {
				t.Fatal(err)
			}
			// The server must hang up well before this generous deadline.
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			start := time.Now()
			_, err = io.Copy(io.Discard, c)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("the server kept a %s connection open for %s", tc.name, time.Since(start).Round(time.Millisecond))
			}
		})
	}
}

func TestIdleConnectionsStayCheap(t *testing.T) {
	raiseFileLimit(t, 4096)
	h := start(t, nil)
	addr := strings.TrimPrefix(h.url, "http://")
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 500
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range conns { // each has had its answer and now idles
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapInuse+after.StackInuse) - int64(before.HeapInuse+before.StackInuse)) / n
	t.Logf("%d idle keep-alive connections: about %d bytes each (heap and stacks, both ends)", n, per)
	if per > 128<<10 {
		t.Fatalf("an idle connection costs %d bytes; bound is 128 KiB", per)
	}
	for _, c := range conns {
		c.Close()
	}
}

func TestAuthFloodIsLimitedPerAddress(t *testing.T) {
	h := start(t, func(c *server.Config) { c.AuthFailRate = 10 })
	alice, _ := h.agent("alice")
	got429 := 0
	for i := range 15 {
		// Valid shape, unknown token: a real guess.
		resp, _ := h.raw("GET", "/api/v1/whoami", map[string]string{"Authorization": fmt.Sprintf("Bearer kfa_%052d", i)}, "")
		switch resp.StatusCode {
		case 401:
		case 429:
			got429++
			if resp.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
		default:
			t.Fatalf("guess %d: %d", i, resp.StatusCode)
		}
	}
	if got429 < 5 {
		t.Fatalf("%d of 15 guesses were limited, want at least 5 at 10 per minute", got429)
	}
	// While the address is limited, no credential from it is even looked
	// at, so a lucky guess would learn nothing; a request without one (an
	// anonymous search, the card) is not affected.
	if resp, _ := h.raw("GET", "/api/v1/whoami", map[string]string{"Authorization": "Bearer " + alice.Token}, ""); resp.StatusCode != 429 {
		t.Fatalf("a credential from a limited address: %d, want 429", resp.StatusCode)
	}
	if resp, _ := h.raw("GET", "/.well-known/agent-card.json", nil, ""); resp.StatusCode != 200 {
		t.Fatalf("the card from a limited address: %d", resp.StatusCode)
	}
	// Other addresses are not affected (the admin socket is another channel).
	if _, err := h.admin.Agents(context.Background(), 0, ""); err != nil {
		t.Fatal(err)
	}
}
