package federation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
)

// Timeouts of every request to a peer: a peer that is down or slow costs
// its own follower and forwarder this much, and nothing else.
const (
	connectTimeout = 5 * time.Second
	requestTimeout = 15 * time.Second
	// maxAnswerBytes bounds an answer that is not a feed page (a card, a
	// task, a page of tasks).
	maxAnswerBytes = 1 << 20
)

// ErrTooBig is an answer over its size bound.
var ErrTooBig = errors.New("the peer's answer is over its size bound")

// StatusError is a peer's answer that is not a success: its HTTP status,
// and the A2A reason and message when its body says them.
type StatusError struct {
	Status  int
	Reason  string
	Message string
}

func (e *StatusError) Error() string {
	msg := e.Message
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	if e.Reason != "" {
		return fmt.Sprintf("the peer answered %d %s: %s", e.Status, e.Reason, msg)
	}
	return fmt.Sprintf("the peer answered %d", e.Status)
}

// Client is this server's client of one peer: its base URL and the token
// of this server's agent there. It is safe for concurrent use.
type Client struct {
	base  string
	token string
	hc    *http.Client
}

// NewClient returns a client of the peer at base (a URL peers.NormalizeURL
// wrote) with token; hc nil is a client with the package's timeouts.
func NewClient(base, token string, hc *http.Client) *Client {
	if hc == nil {
		hc = NewHTTPClient()
	}
	return &Client{base: strings.TrimRight(base, "/"), token: token, hc: hc}
}

// NewHTTPClient is an HTTP client for peers: bounded connects and
// requests, no proxy from the environment, no redirects (a peer's
// answer is its own or an error).
func NewHTTPClient() *http.Client {
	d := &net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   connectTimeout,
		ResponseHeaderTimeout: requestTimeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{Transport: tr, Timeout: requestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// call sends one request to the peer and decodes a 2xx JSON answer of at
// most limit bytes into out. Anything else is an error: a status, an
// answer too big, JSON that does not decode.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, body any, a2aVersion bool, limit int64, out any) error {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if a2aVersion {
		req.Header.Set(a2a.VersionHeader, a2a.Version10)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if int64(len(b)) > limit {
		return fmt.Errorf("%s %s: %w (%d bytes)", method, path, ErrTooBig, limit)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return statusError(resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the JSON expected: %w", method, path, err)
	}
	return nil
}

// statusError reads an error answer: google.rpc.Status's message and
// its ErrorInfo's reason, when it is one.
func statusError(status int, b []byte) error {
	e := &StatusError{Status: status}
	var body struct {
		Error struct {
			Message string `json:"message"`
			Details []struct {
				Reason string `json:"reason"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &body) == nil {
		e.Message = body.Error.Message
		for _, d := range body.Error.Details {
			if d.Reason != "" {
				e.Reason = d.Reason
				break
			}
		}
	}
	return e
}

// IsReason reports whether err is the peer's answer with A2A reason r.
func IsReason(err error, r string) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Reason == r
}

// feedOverhead is what a feed page may hold beyond its documents' text:
// its envelope, and each entry's fields and JSON escaping.
const feedOverhead = 64 << 10

// Changes reads a page of the peer's change feed after cursor: at most
// pageSize entries and maxBytes bytes.
func (c *Client) Changes(ctx context.Context, cursor string, pageSize int, maxBytes int64) (api.ChangesPage, error) {
	q := url.Values{"pageSize": {strconv.Itoa(pageSize)}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var out api.ChangesPage
	if err := c.call(ctx, http.MethodGet, "/api/v1/changes", q, nil, false, maxBytes+feedOverhead, &out); err != nil {
		return api.ChangesPage{}, fmt.Errorf("read the change feed: %w", err)
	}
	if len(out.Changes) > pageSize {
		return api.ChangesPage{}, fmt.Errorf("read the change feed: %d entries, more than the %d asked for", len(out.Changes), pageSize)
	}
	return out, nil
}
