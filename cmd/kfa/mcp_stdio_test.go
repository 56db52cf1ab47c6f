package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioPipe runs an MCP server over a stdio between two pipes: what the
// test writes is the client's input, what it reads the server's output.
type stdioPipe struct {
	t     *testing.T
	in    *io.PipeWriter
	outR  *io.PipeReader
	lines chan []byte // the output, line by line, once reading starts
	done  chan error
}

// answer is one line of output.
type answer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// startStdio serves srv; the test reads its output from the start, or
// from when it calls read.
func startStdio(t *testing.T, srv *mcp.Server, readNow bool) *stdioPipe {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPipe{t: t, in: inW, outR: outR, lines: make(chan []byte, 64), done: make(chan error, 1)}
	s := newStdio(inR, outW)
	go func() {
		err := srv.Run(context.Background(), &mcp.IOTransport{Reader: s, Writer: s})
		_ = outW.Close()
		p.done <- err
	}()
	t.Cleanup(func() { _ = inW.Close(); _ = outR.Close() })
	if readNow {
		p.read()
	}
	return p
}

// read starts reading the output.
func (p *stdioPipe) read() {
	go func() {
		sc := bufio.NewScanner(p.outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(p.lines)
	}()
}

// send writes lines of input; a server that stopped reading fails the
// test after a generous bound rather than hanging it.
func (p *stdioPipe) send(lines ...string) {
	p.t.Helper()
	sent := make(chan error, 1)
	go func() {
		for _, l := range lines {
			if _, err := io.WriteString(p.in, l+"\n"); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	select {
	case err := <-sent:
		if err != nil {
			p.t.Fatalf("write: %v", err)
		}
	case <-time.After(30 * time.Second):
		p.t.Fatal("kfa mcp read no input for 30 s")
	}
}

// line reads the next line of output, within the same bound.
func (p *stdioPipe) line() []byte {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("the output ended: the session is over")
		}
		return l
	case <-time.After(30 * time.Second):
		p.t.Fatal("no answer in 30 s")
	}
	return nil
}

// next reads the next answer.
func (p *stdioPipe) next() answer {
	p.t.Helper()
	l := p.line()
	var a answer
	if err := json.Unmarshal(l, &a); err != nil {
		p.t.Fatalf("output %q: %v", l, err)
	}
	return a
}

const stdioInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestStdioBadLine: a line that is not JSON, or not a JSON-RPC message the
// SDK can take, is answered with an error (id null when it has none) and
// the session goes on; a request read before it is still answered, also
// when the input ends before its answer is ready.
func TestStdioBadLine(t *testing.T) {
	release := make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "slow", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-release
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	p := startStdio(t, srv, true)
	p.send(stdioInit, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if a := p.next(); string(a.ID) != "1" || a.Error != nil {
		t.Fatalf("initialize: %+v", a)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)

	for _, tc := range []struct {
		name, line string
		code       int
		id         string
	}{
		{"not JSON", `this is not JSON`, -32700, "null"},
		{"half a message", `{"jsonrpc":"2.0","id":9,`, -32700, "null"},
		{"two messages on a line", `{"jsonrpc":"2.0","id":9,"method":"ping"} {}`, -32700, "null"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"\xff\"}", -32700, "null"},
		{"another JSON-RPC version", `{"jsonrpc":"1.0","id":10,"method":"ping"}`, -32600, "10"},
		{"an id of the wrong type", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, "null"},
		{"not an object", `42`, -32600, "null"},
		{"a batch after 2025-06-18", `[{"jsonrpc":"2.0","id":11,"method":"ping"}]`, -32600, "null"},
		{"a duplicate argument", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"slow","arguments":{"a":1,"a":2}}}`, -32602, "12"},
		{"a line too long", `{"jsonrpc":"2.0","id":13,"method":"ping","params":{"pad":"` + strings.Repeat("x", maxLine) + `"}}`, -32600, "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.send(tc.line)
			a := p.next()
			if a.Error == nil || a.Error.Code != tc.code || string(a.ID) != tc.id {
				t.Fatalf("answer %+v (%+v), want code %d id %s", a, a.Error, tc.code, tc.id)
			}
		})
	}
	// Blank lines are no messages; the session still serves.
	p.send("", "   ", `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if a := p.next(); string(a.ID) != "3" || a.Error != nil {
		t.Fatalf("ping after the bad lines: %+v", a)
	}
	// The input ends before the slow call is done: its answer still
	// comes, then kfa mcp ends.
	_ = p.in.Close()
	close(release)
	if a := p.next(); string(a.ID) != "2" || a.Error != nil || !strings.Contains(string(a.Result), "done") {
		t.Fatalf("the slow call: %+v", a)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("kfa mcp did not end with its input")
	}
}

// TestStdioVersions: answers are adapted to the protocol version the
// client negotiated (no ttlMs or cacheScope before 2026-07-28), or to the
// one a request names in _meta; batches pass while the version has them.
func TestStdioVersions(t *testing.T) {
	newServer := func() *mcp.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		srv.AddTool(&mcp.Tool{Name: "x", InputSchema: &jsonschema.Schema{Type: "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		return srv
	}
	t.Run("2025-06-18", func(t *testing.T) {
		p := startStdio(t, newServer(), true)
		p.send(stdioInit, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		p.next()
		if a := p.next(); string(a.ID) != "2" || strings.Contains(string(a.Result), "ttlMs") || strings.Contains(string(a.Result), "cacheScope") ||
			!strings.Contains(string(a.Result), `"tools"`) {
			t.Fatalf("tools/list: %s", a.Result)
		}
	})
	t.Run("2025-03-26 batches", func(t *testing.T) {
		p := startStdio(t, newServer(), true)
		p.send(strings.Replace(stdioInit, "2025-06-18", "2025-03-26", 1), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		p.next()
		p.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`)
		var batch []answer
		if l := p.line(); json.Unmarshal(l, &batch) != nil || len(batch) != 2 || strings.Contains(string(l), "ttlMs") {
			t.Fatalf("a 2025-03-26 batch answer: %s", l)
		}
	})
	t.Run("2026-07-28 in _meta", func(t *testing.T) {
		p := startStdio(t, newServer(), true)
		p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
		if a := p.next(); string(a.ID) != "2" || !strings.Contains(string(a.Result), `"ttlMs"`) {
			t.Fatalf("a 2026-07-28 tools/list: %+v %s", a.Error, a.Result)
		}
	})
}

// TestStdioWritesBeforeReads: a client may write its requests before it
// reads an answer; kfa mcp goes on reading them while an answer of the
// SDK's waits to be written (the test's pipes hold nothing: the first
// answer waits until the test reads).
func TestStdioWritesBeforeReads(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	p := startStdio(t, srv, false)
	lines := []string{stdioInit, `{"jsonrpc":"2.0","method":"notifications/initialized"}`}
	for i := range 5 {
		lines = append(lines, `{"jsonrpc":"2.0","id":`+strconv.Itoa(10+i)+`,"method":"ping"}`)
	}
	p.send(lines...)
	p.read()
	ids := map[string]bool{}
	for range 6 {
		ids[string(p.next().ID)] = true
	}
	for _, id := range []string{"1", "10", "11", "12", "13", "14"} {
		if !ids[id] {
			t.Errorf("no answer for id %s: %v", id, ids)
		}
	}
}
