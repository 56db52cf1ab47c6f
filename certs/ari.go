package certs

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ARI asks the CA when to renew a certificate: ACME Renewal Information
// (RFC 9773). The CA answers a window; a renewal at a random time in it
// spreads the CA's load, and a window already past (the CA revoked the
// certificate, or must replace it early) means renew now. Let's Encrypt
// signals revocations and early replacements this way.
type ARI struct {
	hc        *http.Client
	directory string
	now       func() time.Time

	mu    sync.Mutex
	url   string // the directory's renewalInfo; "" until read
	none  bool   // the directory has none: the CA offers no ARI
	picks map[string]pick
}

// pick is the moment chosen in one window for one certificate.
type pick struct {
	start, end, at time.Time
}

// errNoARI is a CA that offers no renewal information.
var errNoARI = errors.New("the CA offers no renewal information (ARI)")

// Bounds on what the CA sends back: the answers are small JSON objects,
// and the next question is asked between a minute and a day later.
const (
	maxARIBody     = 64 << 10
	minRetryAfter  = time.Minute
	maxRetryAfter  = 24 * time.Hour
	defaultRetryIn = 6 * time.Hour
)

// NewARI asks the CA of the ACME directory at directoryURL, through hc.
func NewARI(hc *http.Client, directoryURL string, now func() time.Time) *ARI {
	if now == nil {
		now = time.Now
	}
	return &ARI{hc: hc, directory: directoryURL, now: now, picks: map[string]pick{}}
}

// CertID is the certificate's identifier in ARI: its authority key
// identifier and its serial number (the DER integer's content octets),
// each base64url without padding, joined by a dot.
func CertID(leaf *x509.Certificate) (string, error) {
	if len(leaf.AuthorityKeyId) == 0 {
		return "", errors.New("the certificate has no authority key identifier")
	}
	serial := leaf.SerialNumber.Bytes()
	if len(serial) == 0 || serial[0]&0x80 != 0 {
		// DER keeps a positive integer positive with a leading zero byte.
		serial = append([]byte{0}, serial...)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(leaf.AuthorityKeyId) + "." + enc.EncodeToString(serial), nil
}

// RenewAt is when to renew leaf, and when to ask again. A past time
// means now.
func (a *ARI) RenewAt(ctx context.Context, leaf *x509.Certificate) (at time.Time, askAgain time.Duration, err error) {
	base, err := a.renewalInfoURL(ctx)
	if err != nil {
		return time.Time{}, 0, err
	}
	id, err := CertID(leaf)
	if err != nil {
		return time.Time{}, 0, err
	}
	var body struct {
		SuggestedWindow struct {
			Start time.Time `json:"start"`
			End   time.Time `json:"end"`
		} `json:"suggestedWindow"`
	}
	h, err := a.getJSON(ctx, strings.TrimRight(base, "/")+"/"+id, &body)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("renewal information: %w", err)
	}
	w := body.SuggestedWindow
	if w.Start.IsZero() || !w.Start.Before(w.End) {
		return time.Time{}, 0, fmt.Errorf("renewal information: the window %s..%s is not a window", w.Start, w.End)
	}
	return a.pick(leaf.SerialNumber.String(), w.Start, w.End), retryAfter(h.Get("Retry-After"), a.now()), nil
}

// pick chooses a random moment in the window once per certificate and
// window (RFC 9773 §4.2), so that processes sharing a certificate do not
// all renew it at once: the first renews, the others find the new one.
func (a *ARI) pick(serial string, start, end time.Time) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.picks[serial]; ok && p.start.Equal(start) && p.end.Equal(end) {
		return p.at
	}
	at := start.Add(rand.N(end.Sub(start)))
	if len(a.picks) > 64 {
		clear(a.picks) // old certificates' picks; the current ones are picked again
	}
	a.picks[serial] = pick{start: start, end: end, at: at}
	return at
}

// retryAfter reads a Retry-After header (seconds, or an HTTP date),
// bounded; defaultRetryIn without one.
func retryAfter(v string, now time.Time) time.Duration {
	d := defaultRetryIn
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, minRetryAfter), maxRetryAfter)
}

// renewalInfoURL reads the directory once for its renewalInfo URL.
func (a *ARI) renewalInfoURL(ctx context.Context) (string, error) {
	a.mu.Lock()
	url, none := a.url, a.none
	a.mu.Unlock()
	switch {
	case none:
		return "", errNoARI
	case url != "":
		return url, nil
	}
	var dir struct {
		RenewalInfo string `json:"renewalInfo"`
	}
	if _, err := a.getJSON(ctx, a.directory, &dir); err != nil {
		return "", fmt.Errorf("ACME directory: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if dir.RenewalInfo == "" {
		a.none = true
		return "", errNoARI
	}
	a.url = dir.RenewalInfo
	return a.url, nil
}

// getJSON GETs url and decodes its JSON body into v.
func (a *ARI) getJSON(ctx context.Context, url string, v any) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := a.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxARIBody+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if len(body) > maxARIBody {
		return nil, fmt.Errorf("GET %s: the answer is longer than %d bytes", url, maxARIBody)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return resp.Header, nil
}
