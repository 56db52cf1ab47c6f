package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Metadata is what kfa reads of an issuer's authorization server
// metadata (RFC 8414; OpenID discovery has the same members).
type Metadata struct {
	Issuer                        string   `json:"issuer"`
	AuthorizationEndpoint         string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                 string   `json:"token_endpoint,omitempty"`
	JWKSURI                       string   `json:"jwks_uri"`
	EndSessionEndpoint            string   `json:"end_session_endpoint,omitempty"`
	GrantTypesSupported           []string `json:"grant_types_supported,omitempty"`
	ResponseTypesSupported        []string `json:"response_types_supported,omitempty"`
	CodeChallengeMethodsSupported []string `json:"code_challenge_methods_supported,omitempty"`
	ScopesSupported               []string `json:"scopes_supported,omitempty"`
	// URL is where kfa read it.
	URL string `json:"-"`
}

// SupportsGrant reports whether the issuer offers grant type g. Metadata
// that lists no grant types offers the defaults, authorization_code and
// implicit (RFC 8414 §2).
func (m *Metadata) SupportsGrant(g string) bool {
	if len(m.GrantTypesSupported) == 0 {
		return g == "authorization_code"
	}
	for _, s := range m.GrantTypesSupported {
		if s == g {
			return true
		}
	}
	return false
}

// maxDocument bounds a metadata document or key set kfa reads.
const maxDocument = 1 << 20

// ValidateIssuer checks an issuer URL as --oauth-issuer takes it: an
// absolute https URL without query or fragment, or http on a loopback host
// (127.0.0.1, [::1], localhost), for tests and local providers.
func ValidateIssuer(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q is not an absolute URL without query or fragment", raw)
	}
	return secureURL(u)
}

// secureURL refuses plain http anywhere but on loopback.
func secureURL(u *url.URL) error {
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if loopback(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("%s is plain http on a host that is not loopback; use https (http is allowed on 127.0.0.1, [::1] and localhost only)", u.Redacted())
	}
	return fmt.Errorf("%s is not an http(s) URL", u.Redacted())
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// MetadataURLs are where an issuer's metadata may be, in the order kfa
// tries them: RFC 8414's well-known URL (inserted between the host and
// the issuer's path), then OpenID discovery's (appended to the issuer).
func MetadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	path := strings.TrimSuffix(u.Path, "/")
	rfc := *u
	rfc.Path, rfc.RawPath = "/.well-known/oauth-authorization-server"+path, ""
	return []string{rfc.String(), strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"}
}

// discover reads issuer's metadata: RFC 8414 first, OpenID discovery when
// that is not found. The document must name the issuer exactly (RFC 8414
// §3.3) and a key set kfa may fetch.
func discover(ctx context.Context, client *http.Client, issuer string) (*Metadata, error) {
	var errs []error
	for _, u := range MetadataURLs(issuer) {
		m, err := fetchMetadata(ctx, client, u)
		if err == nil {
			if m.Issuer != issuer {
				return nil, fmt.Errorf("the metadata at %s names the issuer %q, not %q: configure --oauth-issuer exactly as the provider names itself", u, m.Issuer, issuer)
			}
			if m.JWKSURI == "" {
				return nil, fmt.Errorf("the metadata at %s has no jwks_uri: kfa needs the provider's keys", u)
			}
			ju, err := url.Parse(m.JWKSURI)
			if err != nil || ju.Host == "" {
				return nil, fmt.Errorf("the metadata at %s has a jwks_uri that is not a URL: %q", u, m.JWKSURI)
			}
			if err := secureURL(ju); err != nil {
				return nil, fmt.Errorf("the metadata at %s: jwks_uri: %w", u, err)
			}
			m.URL = u
			return m, nil
		}
		errs = append(errs, err)
		var nf *notFoundError
		if !errors.As(err, &nf) {
			// A provider that cannot be reached or answers garbage is not
			// asked again at another URL: the error says what happened.
			return nil, err
		}
	}
	return nil, errors.Join(errs...)
}

// notFoundError is a metadata URL that answered 404 (or 405, 410): try the
// next one.
type notFoundError struct{ url string }

func (e *notFoundError) Error() string { return e.url + " answered: not found" }

// fetchMetadata reads one metadata document.
func fetchMetadata(ctx context.Context, client *http.Client, u string) (*Metadata, error) {
	var m Metadata
	if err := getJSON(ctx, client, u, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// getJSON GETs u and decodes its JSON body, at most maxDocument bytes.
func getJSON(ctx context.Context, client *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusGone || res.StatusCode == http.StatusMethodNotAllowed:
		return &notFoundError{url: u}
	case res.StatusCode != http.StatusOK:
		return fmt.Errorf("GET %s: %s", u, res.Status)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxDocument+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxDocument {
		return fmt.Errorf("GET %s: the document is larger than %d bytes", u, maxDocument)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: not JSON of the expected shape: %w", u, err)
	}
	return nil
}
