// Package client is a small Go client for kfa: the A2A HTTP+JSON binding,
// the public JSON API, and the admin API on the unix socket. The CLI, the
// end-to-end tests and the load benchmark all use it.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kfa-project/kfa/a2a"
)

// Client talks to one kfa server. It is safe for concurrent use.
type Client struct {
	base  string
	http  *http.Client
	token string
}

// Option configures a Client.
type Option func(*Client)

// WithToken sends the bearer token on every request.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithHTTPClient uses hc for requests.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// New returns a client for the server at base, e.g. "http://127.0.0.1:8080".
func New(base string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(base, "/"), http: &http.Client{Timeout: 60 * time.Second}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// WithToken returns a copy of c that sends token.
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.token = token
	return &cp
}

// Token returns the bearer token the client sends, or "".
func (c *Client) Token() string { return c.token }

// NewDialer returns a client whose connections come from dial, for the
// admin socket or an in-process pipe. Requests carry no timeout: imports
// and backups may take long, and ctx bounds them.
func NewDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *Client {
	tr := &http.Transport{DialContext: dial, DisableCompression: true, MaxIdleConns: 4}
	return &Client{base: "http://kfa-admin", http: &http.Client{Transport: tr}}
}

// NewUnix returns a client for the admin socket at path.
func NewUnix(path string) *Client {
	var d net.Dialer
	return NewDialer(func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "unix", path)
	})
}

// Error is an error answer from the server.
type Error struct {
	StatusCode int               // HTTP status
	Status     string            // google.rpc code name, e.g. NOT_FOUND
	Reason     string            // ErrorInfo reason, e.g. TASK_NOT_FOUND
	Message    string            // human-readable message
	Metadata   map[string]string // ErrorInfo metadata
	RetryAfter string            // Retry-After header, if any
}

func (e *Error) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("%s (%d %s): %s", e.Reason, e.StatusCode, e.Status, e.Message)
	}
	return fmt.Sprintf("HTTP %d: %s", e.StatusCode, e.Message)
}

// request describes one call.
type request struct {
	method string
	path   string
	query  url.Values
	body   any       // JSON-encoded when not nil
	raw    io.Reader // sent as is when not nil
	a2a    bool      // send A2A-Version: 1.0
}

// Do performs a call and decodes a 2xx JSON answer into out (when out is
// not nil). Non-2xx answers become *Error.
func (c *Client) do(ctx context.Context, r request, out any) (*http.Response, error) {
	u := c.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader = r.raw
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if r.a2a {
		req.Header.Set(a2a.VersionHeader, a2a.Version10)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, decodeError(resp)
	}
	if out != nil && resp.StatusCode != http.StatusNoContent {
		if w, ok := out.(io.Writer); ok {
			_, err = io.Copy(w, resp.Body)
			return resp, err
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return resp, fmt.Errorf("decode %s %s answer: %w", r.method, r.path, err)
		}
	}
	return resp, nil
}

func decodeError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := &Error{StatusCode: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
	var body a2a.StatusBody
	if json.Unmarshal(b, &body) == nil && body.Error.Code != 0 {
		e.Status, e.Message = body.Error.Status, body.Error.Message
		for _, d := range body.Error.Details {
			m, ok := d.(map[string]any)
			if !ok || m["@type"] != a2a.TypeErrorInfo {
				continue
			}
			e.Reason, _ = m["reason"].(string)
			if md, ok := m["metadata"].(map[string]any); ok {
				e.Metadata = make(map[string]string, len(md))
				for k, v := range md {
					e.Metadata[k], _ = v.(string)
				}
			}
		}
		return e
	}
	e.Message = strings.TrimSpace(string(b))
	if e.Message == "" {
		e.Message = resp.Status
	}
	return e
}
