package oauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Scopes kfa grants on a token, as its scope claim names them.
const (
	ScopeRead = "read"
	ScopePost = "post"
)

// MaxSkew is how far kfa's clock and the provider's may disagree: a token
// is accepted up to MaxSkew after its exp and from MaxSkew before its nbf.
const MaxSkew = 60 * time.Second

// ErrRefused is what every refused token's error matches (errors.Is).
var ErrRefused = errors.New("access token refused")

// Refusal is a token kfa does not accept, with the reason in words the
// caller can act on. Scope, when set, is the scope the token lacks: the
// token is valid but insufficient (HTTP 403, error="insufficient_scope"),
// not invalid (401).
type Refusal struct {
	Reason string
	Scope  string
}

func (r *Refusal) Error() string { return r.Reason }

// Is makes errors.Is(err, ErrRefused) hold.
func (r *Refusal) Is(target error) bool { return target == ErrRefused }

func refusef(format string, args ...any) *Refusal {
	return &Refusal{Reason: fmt.Sprintf(format, args...)}
}

// Token is an accepted access token: who it speaks for and what it
// grants.
type Token struct {
	Issuer  string
	Subject string
	// Scopes are the kfa scopes it grants, of read and post, in that
	// order.
	Scopes []string
	// Name is what to call a new agent of this identity: the token's
	// preferred_username, client_id or azp, in that order ("" when none).
	Name      string
	ClientID  string
	ExpiresAt time.Time
}

// claims are the members of an access token kfa reads.
type claims struct {
	Issuer    string          `json:"iss"`
	Subject   string          `json:"sub"`
	Audience  stringList      `json:"aud"`
	Expiry    json.RawMessage `json:"exp"`
	NotBefore json.RawMessage `json:"nbf"`
	IssuedAt  json.RawMessage `json:"iat"`
	Scope     *stringOrList   `json:"scope"`
	SCP       *stringOrList   `json:"scp"`   // Okta and Entra (delegated)
	Roles     *stringOrList   `json:"roles"` // Entra (application permissions)
	Username  string          `json:"preferred_username"`
	ClientID  string          `json:"client_id"`
	AZP       string          `json:"azp"`
}

// numericDate reads the JWT date claim name (RFC 7519 §2, NumericDate):
// seconds since the epoch, fractions allowed, as a finite JSON number.
// It stays a number of seconds and is compared as one: a time.Time made
// from it would wrap around beyond the year 2262, turning a date in the
// year 2300 into one in 1700. ok is false when the claim is absent (or
// null); anything but a number (a string, 1e400) is a refusal.
func numericDate(name string, raw json.RawMessage) (sec float64, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false, nil
	}
	if raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9' {
		if sec, err := strconv.ParseFloat(string(raw), 64); err == nil && !math.IsInf(sec, 0) && !math.IsNaN(sec) {
			return sec, true, nil
		}
	}
	return 0, false, refusef("the token's %s is not a date: RFC 7519 wants a number of seconds since 1970, not %.40s", name, raw)
}

// unixSeconds is t as seconds since the epoch, the unit of NumericDate.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// The seconds of the first and last instants that RFC 3339 can write.
const (
	minDateSec = -62135596800 // 0001-01-01T00:00:00Z
	maxDateSec = 253402300799 // 9999-12-31T23:59:59Z
)

// dateTime is sec as a time, held within the years 1 to 9999.
func dateTime(sec float64) time.Time {
	sec = max(minDateSec, min(maxDateSec, sec))
	whole := math.Floor(sec)
	return time.Unix(int64(whole), int64((sec-whole)*1e9)).UTC()
}

// formatDate writes sec for a refusal: RFC 3339, or the number itself
// beyond what RFC 3339 can write.
func formatDate(sec float64) string {
	if sec < minDateSec || sec > maxDateSec {
		return fmt.Sprintf("%g seconds after 1970 (beyond the year 9999, or before the year 1)", sec)
	}
	return dateTime(sec).Format(time.RFC3339)
}

// stringList is the aud claim: one string or an array of them.
type stringList []string

func (s *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = stringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("aud is neither a string nor an array of strings")
	}
	*s = many
	return nil
}

// stringOrList is a scope claim: space-separated (RFC 9068), or an array
// (some providers).
type stringOrList []string

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = strings.Fields(one)
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("a scope claim is neither a string nor an array of strings")
	}
	*s = many
	return nil
}

// Policy is what a verified token's claims must satisfy.
type Policy struct {
	// Issuer is the issuer the token must name, exactly.
	Issuer string
	// Audiences are kfa's resource identifiers: the token's aud must hold
	// one of them.
	Audiences []string
}

// checkClaims decides whether claims c, from a token whose signature
// verified with a key of p.Issuer, are accepted at now, and what they
// grant. It is the rule of RFC 9068 as kfa applies it: the issuer
// exactly, an audience of kfa's, exp (required), nbf and iat with at
// most MaxSkew of skew, a subject, and a scope of read or post. The
// scope comes from scope, or, when the token has none, scp, then roles
// (the claims Okta and Entra use).
func checkClaims(c claims, p Policy, now time.Time) (Token, error) {
	exp, hasExp, err := numericDate("exp", c.Expiry)
	if err != nil {
		return Token{}, err
	}
	nbf, hasNbf, err := numericDate("nbf", c.NotBefore)
	if err != nil {
		return Token{}, err
	}
	iat, hasIat, err := numericDate("iat", c.IssuedAt)
	if err != nil {
		return Token{}, err
	}
	switch {
	case c.Issuer != p.Issuer:
		return Token{}, refusef("the token's issuer %q is not %q, the issuer of the key that signed it", c.Issuer, p.Issuer)
	case c.Subject == "":
		return Token{}, refusef("the token has no subject (sub): kfa needs it to know whose the token is")
	case !hasExp:
		return Token{}, refusef("the token has no expiry (exp); kfa accepts only tokens that expire (RFC 9068)")
	}
	if !slices.ContainsFunc(c.Audience, func(a string) bool { return slices.Contains(p.Audiences, a) }) {
		got := "none"
		if len(c.Audience) > 0 {
			got = fmt.Sprintf("%q", []string(c.Audience))
		}
		return Token{}, refusef("the token's audience (aud %s) is not this server: ask the provider for a token whose audience is %s",
			got, strings.Join(quoteAll(p.Audiences), " or "))
	}
	// Seconds against seconds: no conversion that could wrap around.
	at, skew := unixSeconds(now), MaxSkew.Seconds()
	if !(at < exp+skew) {
		return Token{}, refusef("the token expired at %s; get a new one from the provider", formatDate(exp))
	}
	if hasNbf && at < nbf-skew {
		return Token{}, refusef("the token is not valid before %s (nbf); check the provider's clock, or wait", formatDate(nbf))
	}
	if hasIat && iat-skew > at {
		return Token{}, refusef("the token was issued in the future (iat %s); check the provider's clock", formatDate(iat))
	}
	raw := c.Scope
	if raw == nil {
		raw = c.SCP
	}
	if raw == nil {
		raw = c.Roles
	}
	var scopes []string
	for _, s := range []string{ScopeRead, ScopePost} {
		if raw != nil && slices.Contains(*raw, s) {
			scopes = append(scopes, s)
		}
	}
	if len(scopes) == 0 {
		return Token{}, &Refusal{Scope: ScopeRead,
			Reason: `the token grants neither the "read" nor the "post" scope: ask the provider for a token with scope "read" (search and read your tasks) or "post" (also ask and reply)`}
	}
	t := Token{Issuer: c.Issuer, Subject: c.Subject, Scopes: scopes, ClientID: c.ClientID, ExpiresAt: dateTime(exp)}
	for _, n := range []string{c.Username, c.ClientID, c.AZP} {
		if n != "" {
			t.Name = n
			break
		}
	}
	return t, nil
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}
