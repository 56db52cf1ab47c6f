package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Config configures a Verifier.
type Config struct {
	// Issuers are the issuer URLs whose tokens kfa accepts, exactly as
	// each provider names itself (ValidateIssuer).
	Issuers []string
	// Audiences are kfa's resource identifiers; a token's aud must hold
	// one of them (normally the public URL and the public URL + "/mcp").
	Audiences []string
	// PlainJWT are issuers (of Issuers) whose access tokens may be typed
	// JWT, or not typed, rather than at+jwt: providers that cannot type
	// their access tokens (kfa serve --oauth-plain-jwt-issuer).
	PlainJWT []string
	// HTTPClient fetches metadata and keys; nil uses one with a 10 s
	// timeout.
	HTTPClient *http.Client
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	Log *slog.Logger
	// RefetchGap is the least time between two key set fetches caused by
	// unknown key ids, per issuer; 0 is DefaultRefetchGap.
	RefetchGap time.Duration
	// Refresh is how often the keys are fetched anyway, so that a key the
	// provider withdrew stops verifying; 0 is an hour.
	Refresh time.Duration
	// RetryMin and RetryMax bound the wait between attempts to reach an
	// issuer that did not answer; 0 is 1 s and 1 minute.
	RetryMin, RetryMax time.Duration
}

// Verifier verifies access tokens of the configured issuers.
type Verifier struct {
	cfg     Config
	issuers map[string]*Issuer
	order   []*Issuer

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when an issuer is discovered
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// Issuer is one configured issuer as kfa knows it now.
type Issuer struct {
	URL  string
	keys *keySet
	// plainJWT accepts its access tokens typed JWT, or untyped.
	plainJWT bool

	mu      sync.Mutex
	meta    *Metadata // nil until discovered
	lastErr error
	ready   chan struct{} // closed when discovered
}

// NewVerifier checks cfg and returns a Verifier that knows nothing of its
// issuers yet: Start discovers them.
func NewVerifier(cfg Config) (*Verifier, error) {
	if len(cfg.Issuers) == 0 {
		return nil, errors.New("oauth: no issuer")
	}
	if len(cfg.Audiences) == 0 {
		return nil, errors.New("oauth: no audience")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.RefetchGap == 0 {
		cfg.RefetchGap = DefaultRefetchGap
	}
	if cfg.Refresh == 0 {
		cfg.Refresh = time.Hour
	}
	if cfg.RetryMin == 0 {
		cfg.RetryMin = time.Second
	}
	if cfg.RetryMax == 0 {
		cfg.RetryMax = time.Minute
	}
	v := &Verifier{cfg: cfg, issuers: map[string]*Issuer{}, changed: make(chan struct{})}
	for _, u := range cfg.Issuers {
		if err := ValidateIssuer(u); err != nil {
			return nil, fmt.Errorf("oauth-issuer: %w", err)
		}
		if v.issuers[u] != nil {
			return nil, fmt.Errorf("oauth-issuer: %s is named twice", u)
		}
		is := &Issuer{URL: u, ready: make(chan struct{})}
		is.keys = &keySet{fetch: func(ctx context.Context, url string, x any) error { return getJSON(ctx, cfg.HTTPClient, url, x) },
			now: cfg.Now, gap: cfg.RefetchGap}
		v.issuers[u] = is
		v.order = append(v.order, is)
	}
	for _, u := range cfg.PlainJWT {
		is := v.issuers[u]
		if is == nil {
			return nil, fmt.Errorf("oauth-plain-jwt-issuer: %s is not an --oauth-issuer", u)
		}
		is.plainJWT = true
	}
	return v, nil
}

// Issuers are the configured issuers, in the order given.
func (v *Verifier) Issuers() []*Issuer { return slices.Clone(v.order) }

// Audiences are the resource identifiers tokens must name.
func (v *Verifier) Audiences() []string { return slices.Clone(v.cfg.Audiences) }

// Metadata is the issuer's metadata, nil until kfa has read it.
func (is *Issuer) Metadata() *Metadata {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.meta
}

// err is the last discovery's error.
func (is *Issuer) err() error {
	is.mu.Lock()
	defer is.mu.Unlock()
	if is.lastErr == nil {
		return errors.New("not tried yet")
	}
	return is.lastErr
}

// Ready is closed once the issuer's metadata and keys are loaded, after
// Verifier.Changed has announced it.
func (is *Issuer) Ready() <-chan struct{} { return is.ready }

// Changed is closed the next time an issuer's metadata is read (the agent
// card names its endpoints).
func (v *Verifier) Changed() <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.changed
}

func (v *Verifier) notify() {
	v.mu.Lock()
	defer v.mu.Unlock()
	close(v.changed)
	v.changed = make(chan struct{})
}

// Start discovers every issuer in the background and keeps their keys
// fresh until Stop. An issuer that cannot be reached is logged, says so to
// the tokens it signed, and is tried again (RetryMin, doubling to
// RetryMax); the other issuers, and kfa's own tokens, work meanwhile.
func (v *Verifier) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	v.mu.Lock()
	v.stop = cancel
	v.mu.Unlock()
	for _, is := range v.order {
		v.wg.Add(1)
		go func() {
			defer v.wg.Done()
			v.run(ctx, is)
		}()
	}
}

// Stop ends the background work and waits for it; a second Stop does
// nothing.
func (v *Verifier) Stop() {
	v.mu.Lock()
	stop := v.stop
	v.stop = nil
	v.mu.Unlock()
	if stop != nil {
		stop()
	}
	v.wg.Wait()
}

// run discovers is, then refreshes its keys every Refresh.
func (v *Verifier) run(ctx context.Context, is *Issuer) {
	wait := v.cfg.RetryMin
	for attempt := 1; ; attempt++ {
		err := v.discover(ctx, is)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		v.cfg.Log.Error("oauth: cannot use issuer; kfa tokens keep working, this issuer's tokens are refused until it answers",
			"issuer", is.URL, "attempt", attempt, "retry_in", wait.String(), "err", err)
		if !sleep(ctx, wait) {
			return
		}
		wait = min(2*wait, v.cfg.RetryMax)
	}
	for sleep(ctx, v.cfg.Refresh) {
		if err := is.keys.load(ctx); err != nil && ctx.Err() == nil {
			n, at, _ := is.keys.state()
			v.cfg.Log.Warn("oauth: cannot refresh the issuer's keys; keeping those fetched earlier", "issuer", is.URL,
				"keys", n, "fetched_at", at.UTC().Format(time.RFC3339), "err", err)
		}
	}
}

// discover reads is's metadata and keys.
func (v *Verifier) discover(ctx context.Context, is *Issuer) error {
	m, err := discover(ctx, v.cfg.HTTPClient, is.URL)
	if err == nil {
		is.keys.mu.Lock()
		is.keys.url = m.JWKSURI
		is.keys.mu.Unlock()
		err = is.keys.load(ctx)
	}
	is.mu.Lock()
	is.lastErr = err
	if err == nil {
		is.meta = m
	}
	is.mu.Unlock()
	if err != nil {
		return err
	}
	n, _, _ := is.keys.state()
	v.cfg.Log.Info("oauth: issuer ready", "issuer", is.URL, "metadata", m.URL, "keys", n)
	// Changed before Ready: whoever waited for the issuer to be ready
	// finds the change already announced (the agent card is rebuilt).
	v.notify()
	close(is.ready)
	return nil
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// LooksLikeJWT reports whether token has the shape of a compact JWS
// (three base64url parts): what kfa tries as an access token.
func LooksLikeJWT(token string) bool {
	if strings.Count(token, ".") != 2 {
		return false
	}
	for _, c := range []byte(token) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// MaxTokenBytes bounds an access token kfa looks at.
const MaxTokenBytes = 16 << 10

// header is the JOSE header members kfa reads before it verifies.
type header struct {
	Alg  string   `json:"alg"`
	Kid  string   `json:"kid"`
	Typ  string   `json:"typ"`
	Crit []string `json:"crit"`
}

// Verify checks an access token and returns what it grants, or a
// *Refusal saying why it is not accepted.
func (v *Verifier) Verify(ctx context.Context, token string) (Token, error) {
	if len(token) > MaxTokenBytes {
		return Token{}, refusef("the token is longer than %d bytes", MaxTokenBytes)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Token{}, refusef("the token is neither a kfa token (kfa_...) nor a JWT access token")
	}
	var h header
	if err := decodePart(parts[0], &h); err != nil {
		return Token{}, refusef("the token's header does not decode: %v", err)
	}
	alg := jose.SignatureAlgorithm(h.Alg)
	switch {
	case strings.EqualFold(h.Alg, "none"):
		return Token{}, refusef(`the token is not signed (alg "none"); kfa accepts tokens signed by the issuer with %s`, algNames())
	case strings.HasPrefix(strings.ToUpper(h.Alg), "HS"):
		return Token{}, refusef(`the token is signed with a shared secret (alg %q); kfa accepts only tokens signed with the issuer's private key: %s`, h.Alg, algNames())
	case !slices.Contains(Algorithms, alg):
		return Token{}, refusef("the token's signature algorithm %q is not accepted; kfa accepts %s", h.Alg, algNames())
	case len(h.Crit) > 0:
		return Token{}, refusef("the token has critical header parameters kfa does not understand (%s)", strings.Join(h.Crit, ", "))
	}
	// The issuer picks the keys; the claims are trusted only once the
	// signature verifies with one of them.
	var unverified struct {
		Issuer string `json:"iss"`
	}
	if err := decodePart(parts[1], &unverified); err != nil {
		return Token{}, refusef("the token's claims do not decode: %v", err)
	}
	is := v.issuers[unverified.Issuer]
	if is == nil {
		return Token{}, refusef("the token's issuer %q is not configured on this server; it accepts tokens of %s", unverified.Issuer,
			strings.Join(quoteAll(v.cfg.Issuers), ", "))
	}
	if err := checkType(h.Typ, is.plainJWT, is.URL); err != nil {
		return Token{}, err
	}
	if is.Metadata() == nil {
		return Token{}, refusef("kfa has not reached issuer %s yet (%v); it keeps trying, so try again later", is.URL, is.err())
	}
	keys, err := is.keys.lookup(ctx, is.URL, h.Kid, alg)
	if err != nil {
		return Token{}, err
	}
	jws, err := jose.ParseSignedCompact(token, Algorithms)
	if err != nil {
		return Token{}, refusef("the token is not a valid JWS: %v", err)
	}
	var payload []byte
	for _, k := range keys {
		if payload, err = jws.Verify(k); err == nil {
			break
		}
	}
	if payload == nil {
		return Token{}, refusef("the token's signature does not verify with the key of issuer %s it names", is.URL)
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Token{}, refusef("the token's claims do not decode: %v", err)
	}
	return checkClaims(c, Policy{Issuer: is.URL, Audiences: v.cfg.Audiences}, v.cfg.Now())
}

// decodePart decodes one base64url part of a compact JWS as JSON.
func decodePart(part string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return errors.New("not base64url")
	}
	return json.Unmarshal(b, v)
}

func algNames() string {
	names := make([]string, len(Algorithms))
	for i, a := range Algorithms {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}
