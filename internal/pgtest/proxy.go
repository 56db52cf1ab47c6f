package pgtest

import (
	"bytes"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy forwards TCP connections to a PostgreSQL server, and can cut one
// off at a chosen moment: right after the server committed a
// transaction, before the client hears of it. That is a COMMIT whose
// outcome the client cannot know, as when the primary dies or a failover
// cuts the session while it commits.
type Proxy struct {
	ln     net.Listener
	target string
	// frozen, when closed, makes the connections open then stop
	// forwarding, both ways, without closing: a server gone silent (a
	// machine down, a network cut). Connections opened later work.
	frozen    chan struct{}
	done      chan struct{} // closed when the proxy closes
	closeOnce sync.Once
	// cutCommit, when set, makes the next server answer that completes a
	// COMMIT close its connection instead of reaching the client.
	cutCommit atomic.Bool
	cuts      atomic.Int64
	mu        sync.Mutex
	conns     []net.Conn
}

// NewProxy starts a proxy to the server of dbURL and returns it with the
// URL that reaches the same database through it; both end with t.
func NewProxy(t testing.TB, dbURL string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal("pgtest: the database URL does not parse")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: u.Host, frozen: make(chan struct{}), done: make(chan struct{})}
	go p.serve()
	t.Cleanup(p.Close)
	u.Host = ln.Addr().String()
	return p, u.String()
}

// CutAtCommit arms the proxy: the next COMMIT that completes on the
// server has its answer dropped and its connection closed.
func (p *Proxy) CutAtCommit() { p.cutCommit.Store(true) }

// CloseAll closes every connection open now, as a server that stops
// does; new connections work.
func (p *Proxy) CloseAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// Freeze makes every connection open now stop forwarding, without
// closing it; new connections work.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.frozen)
	p.frozen = make(chan struct{})
}

// Cuts is how many connections the proxy cut at a COMMIT.
func (p *Proxy) Cuts() int { return int(p.cuts.Load()) }

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		frozen := p.frozen
		p.mu.Unlock()
		go func() { _, _ = io.Copy(s, freezable{c, frozen, p.done}); _ = s.Close() }()
		go p.answers(freezable{s, frozen, p.done}, c)
	}
}

// commandComplete is the server's CommandComplete message of a COMMIT:
// its type, its length (4 + "COMMIT\x00"), its tag.
var commandComplete = []byte("C\x00\x00\x00\x0bCOMMIT\x00")

// answers copies the server's answers to the client, dropping the one
// that completes a COMMIT when the proxy is armed.
func (p *Proxy) answers(s io.ReadCloser, c net.Conn) {
	defer c.Close()
	defer s.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if bytes.Contains(buf[:n], commandComplete) && p.cutCommit.CompareAndSwap(true, false) {
				p.cuts.Add(1)
				return // the transaction committed; the client never hears
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Close stops the proxy and closes every connection (it is safe twice):
// a frozen one then ends.
func (p *Proxy) Close() {
	p.closeOnce.Do(func() { close(p.done) })
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
}

// freezable is a connection whose reads block for good, once frozen is
// closed, after the read in progress.
type freezable struct {
	net.Conn
	frozen, done chan struct{}
}

func (f freezable) Read(b []byte) (int, error) {
	n, err := f.Conn.Read(b)
	select {
	case <-f.frozen:
		<-f.done // silent until the proxy closes
		return 0, io.EOF
	default:
	}
	return n, err
}
