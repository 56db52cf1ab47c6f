// Package pushreceiver receives kfa's push notifications: it checks the
// signature against kfa's JWKS, the body against the signed digest and
// the token, and drops the duplicates that at-least-once delivery
// brings. docs/push.md shows this file; copy it, or import it.
package pushreceiver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Claims are the claims of the KFA-Signature header.
type Claims struct {
	IssuedAt   int64  `json:"iat"`
	JTI        string `json:"jti"` // the delivery id: the same on every retry
	TaskID     string `json:"taskId"`
	BodySHA256 string `json:"bodySha256"` // hex SHA-256 of the body
}

// Receiver is an http.Handler for the URL of a push config.
type Receiver struct {
	JWKSURL string                   // https://kfa.example.com/.well-known/jwks.json
	Token   string                   // the config's token, if it has one
	Handle  func(event []byte) error // called once per notification
	Client  *http.Client             // for the JWKS; nil: http.DefaultClient

	mu      sync.Mutex
	keys    jose.JSONWebKeySet
	fetched time.Time
	seen    map[string]bool // jtis handled (true) or being handled (false); keep them longer than kfa retries (24h)
}

// ServeHTTP answers 204 once a notification is handled (or was before),
// 401 to a request kfa did not sign (kfa never retries a 4xx), and 503
// when Handle fails or another request is handling the same notification
// now, so that kfa sends it again later.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	got := r.Header.Get("X-A2A-Notification-Token")
	if rc.Token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(rc.Token)) != 1 {
		http.Error(w, "wrong token", http.StatusUnauthorized)
		return
	}
	c, err := rc.Verify(r.Context(), r.Header.Get("KFA-Signature"), body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	// Claim the jti before Handle runs, not after: a copy that arrives
	// while the first is being handled (kfa timed out and retried, or
	// someone replays it) must not be handled a second time.
	rc.mu.Lock()
	done, claimed := rc.seen[c.JTI]
	if !claimed {
		if rc.seen == nil {
			rc.seen = map[string]bool{}
		}
		rc.seen[c.JTI] = false
	}
	rc.mu.Unlock()
	if claimed && !done {
		http.Error(w, "being handled; try again later", http.StatusServiceUnavailable)
		return
	}
	if !claimed {
		err := rc.Handle(body)
		rc.mu.Lock()
		if err != nil {
			delete(rc.seen, c.JTI) // the next copy handles it
		} else {
			rc.seen[c.JTI] = true
		}
		rc.mu.Unlock()
		if err != nil {
			http.Error(w, "try again later", http.StatusServiceUnavailable)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// Verify checks a KFA-Signature header against the JWKS and the body,
// and returns its claims.
func (rc *Receiver) Verify(ctx context.Context, header string, body []byte) (Claims, error) {
	jws, err := jose.ParseSignedCompact(header, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(jws.Signatures) != 1 {
		return Claims{}, errors.New("no valid KFA-Signature")
	}
	key, err := rc.key(ctx, jws.Signatures[0].Protected.KeyID)
	if err != nil {
		return Claims{}, err
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return Claims{}, errors.New("the signature does not verify")
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Claims{}, errors.New("the claims do not decode")
	}
	sum := sha256.Sum256(body)
	if subtle.ConstantTimeCompare([]byte(c.BodySHA256), []byte(hex.EncodeToString(sum[:]))) != 1 {
		return Claims{}, errors.New("the body is not the one signed")
	}
	if age := time.Since(time.Unix(c.IssuedAt, 0)); age > 5*time.Minute || age < -time.Minute {
		return Claims{}, errors.New("the signature is too old (or from the future): a replay?")
	}
	return c, nil
}

// key returns the public key kid names. A kid it does not know (kfa
// rotated its key) fetches the JWKS again, at most once a minute.
func (rc *Receiver) key(ctx context.Context, kid string) (*jose.JSONWebKey, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if keys := rc.keys.Key(kid); len(keys) == 1 {
		return &keys[0], nil
	}
	if time.Since(rc.fetched) < time.Minute {
		return nil, fmt.Errorf("unknown key %q", kid)
	}
	rc.fetched = time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rc.JWKSURL, nil)
	if err != nil {
		return nil, err
	}
	client := rc.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch the JWKS: %w", err)
	}
	defer resp.Body.Close()
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, fmt.Errorf("read the JWKS: %w", err)
	}
	rc.keys = set
	if keys := set.Key(kid); len(keys) == 1 {
		return &keys[0], nil
	}
	return nil, fmt.Errorf("unknown key %q", kid)
}
