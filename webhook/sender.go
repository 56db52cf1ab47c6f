package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kfa-project/kfa/push"
)

// Defaults of SenderConfig.
const (
	DefaultTimeout = 10 * time.Second
	DefaultMaxBody = 64 << 10
)

// Resolver looks up a host's addresses; *net.Resolver is one. Tests
// replace it to make a name resolve wherever they like.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// SenderConfig tunes a Sender.
type SenderConfig struct {
	// Policy is checked against every address a request connects to.
	Policy push.Policy
	// Timeout bounds one request, from dialing to reading the answer.
	// Default 10s.
	Timeout time.Duration
	// MaxBody is how much of an answer's body is read (and discarded).
	// Default 64 KiB.
	MaxBody int64
	// Resolver resolves host names; default net.DefaultResolver.
	Resolver Resolver
	// UserAgent is sent with every request.
	UserAgent string
}

// Sender makes the HTTP requests of deliveries. It follows no redirect,
// uses no proxy, and connects only to addresses the policy allows,
// checked after resolution, so a name that resolves to a private address
// is refused at connect time. It is safe for concurrent use.
type Sender struct {
	cfg        SenderConfig
	tls, plain *http.Client // https, and http (which needs the allow list)
	dialer     net.Dialer
	transports []*http.Transport
}

// NewSender returns a Sender.
func NewSender(cfg SenderConfig) *Sender {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	s := &Sender{cfg: cfg, dialer: net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}}
	s.tls = s.client(false)
	s.plain = s.client(true)
	return s
}

func (s *Sender) client(plain bool) *http.Client {
	tr := &http.Transport{
		Proxy: nil, // a proxy would connect where the policy never looked
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return s.dial(ctx, network, addr, plain)
		},
		TLSHandshakeTimeout:   s.cfg.Timeout,
		ResponseHeaderTimeout: s.cfg.Timeout,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	s.transports = append(s.transports, tr)
	return &http.Client{
		Transport: tr,
		Timeout:   s.cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a 3xx is the answer, not a hop
		},
	}
}

// Close closes idle connections.
func (s *Sender) Close() {
	for _, tr := range s.transports {
		tr.CloseIdleConnections()
	}
}

// refusedError is a destination the policy refused at connect time.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// dial resolves addr's host and connects to the first of its addresses
// the policy allows; when it allows none, the error is a refusal.
func (s *Sender) dial(ctx context.Context, network, addr string, plain bool) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		if ips, err = s.cfg.Resolver.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
	}
	var refusal, last error
	for _, ip := range ips {
		if err := s.cfg.Policy.CheckDial(host, ip, plain); err != nil {
			refusal = err
			continue
		}
		conn, err := s.dialer.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		last = err
	}
	if last != nil {
		return nil, last
	}
	if refusal != nil {
		return nil, &refusedError{refusal}
	}
	return nil, fmt.Errorf("resolve %s: no addresses", host)
}

// Request is what one attempt sends.
type Request struct {
	Config    push.Config
	Body      []byte
	Signature string // the KFA-Signature header
}

// Send POSTs one delivery and says what came back. It never returns the
// URL's query, the token or the credentials in an error.
func (s *Sender) Send(ctx context.Context, r Request) push.Response {
	u, err := url.Parse(r.Config.URL)
	if err != nil {
		return push.Response{Err: errors.New("the config's URL does not parse"), Refused: true}
	}
	if _, err := s.cfg.Policy.CheckURL(r.Config.URL); err != nil {
		return push.Response{Err: err, Refused: true}
	}
	client := s.tls
	if strings.EqualFold(u.Scheme, "http") {
		client = s.plain
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.Config.URL, bytes.NewReader(r.Body))
	if err != nil {
		return push.Response{Err: errors.New("the request could not be made"), Refused: true}
	}
	h := req.Header
	h.Set("Content-Type", "application/a2a+json")
	if s.cfg.UserAgent != "" {
		h.Set("User-Agent", s.cfg.UserAgent)
	}
	h.Set("KFA-Signature", r.Signature)
	if c := r.Config; c.AuthScheme != "" {
		h.Set("Authorization", strings.TrimSpace(c.AuthScheme+" "+c.AuthCredentials))
	}
	if r.Config.Token != "" {
		h.Set("X-A2A-Notification-Token", r.Config.Token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return push.Response{Err: describe(u, err), Refused: isRefused(err)}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, s.cfg.MaxBody))
	out := push.Response{Status: resp.StatusCode}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		out.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return out
}

func isRefused(err error) bool {
	var r *refusedError
	return errors.As(err, &r)
}

// describe says what went wrong without the URL (whose query or path may
// be a secret): the host and the cause.
func describe(u *url.URL, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var r *refusedError
	if errors.As(err, &r) {
		return fmt.Errorf("refused destination: %w", r.err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer from %s in time", u.Host)
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return fmt.Errorf("connect to %s: %v", u.Host, oe.Err)
	}
	return fmt.Errorf("request to %s: %v", u.Host, err)
}

// retryAfter reads a Retry-After header: seconds or an HTTP date. It
// returns 0 for none or nonsense.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(min(n, 7*24*3600)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
