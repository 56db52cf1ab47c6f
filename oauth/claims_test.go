package oauth

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCheckClaims(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	p := Policy{Issuer: "https://idp.example.com", Audiences: []string{"https://kfa.example.com", "https://kfa.example.com/mcp"}}
	at := func(d time.Duration) string { return jsonNum(now.Add(d)) }
	for _, tc := range []struct {
		name   string
		claims string
		want   string // a part of the refusal; "" accepts
		scope  string // the refusal's missing scope
		scopes string // the accepted token's scopes
		named  string
	}{
		{"accepted", `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","exp":` + at(time.Minute) + `,"scope":"read post openid","client_id":"svc"}`,
			"", "", "read post", "svc"},
		{"aud array with the MCP resource", `{"iss":"https://idp.example.com","sub":"s","aud":["x","https://kfa.example.com/mcp"],"exp":` + at(time.Minute) + `,"scope":"read","preferred_username":"alice","client_id":"svc"}`,
			"", "", "read", "alice"},
		{"read only", `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","exp":` + at(time.Minute) + `,"scope":"read"}`,
			"", "", "read", ""},
		{"scp as an array (Okta)", `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","exp":` + at(time.Minute) + `,"scp":["post"],"azp":"app"}`,
			"", "", "post", "app"},
		{"roles (Entra applications)", `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","exp":` + at(time.Minute) + `,"roles":["read","post"]}`,
			"", "", "read post", ""},
		{"scope wins over scp", `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","exp":` + at(time.Minute) + `,"scope":"read","scp":"post"}`,
			"", "", "read", ""},
		{"expired within the skew", `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","exp":` + at(-59*time.Second) + `,"scope":"read"}`,
			"", "", "read", ""},
		{"expired", `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","exp":` + at(-60*time.Second) + `,"scope":"read"}`,
			"the token expired at 2026-12-03T09:59:00Z", "", "", ""},
		{"not yet valid within the skew", `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","exp":` + at(time.Hour) + `,"nbf":` + at(60*time.Second) + `,"scope":"read"}`,
			"", "", "read", ""},
		{"not yet valid", `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","exp":` + at(time.Hour) + `,"nbf":` + at(61*time.Second) + `,"scope":"read"}`,
			"not valid before 2026-12-03T10:01:01Z", "", "", ""},
		{"no expiry", `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","scope":"read"}`,
			"has no expiry", "", "", ""},
		{"no subject", `{"iss":"https://idp.example.com","aud":"https://kfa.example.com","exp":` + at(time.Minute) + `,"scope":"read"}`,
			"has no subject", "", "", ""},
		{"another issuer", `{"iss":"https://idp.example.com/","sub":"s","aud":"https://kfa.example.com","exp":` + at(time.Minute) + `,"scope":"read"}`,
			`issuer "https://idp.example.com/" is not "https://idp.example.com"`, "", "", ""},
		{"wrong audience", `{"iss":"https://idp.example.com","sub":"s","aud":["https://other.example.com"],"exp":` + at(time.Minute) + `,"scope":"read"}`,
			`audience (aud ["https://other.example.com"]) is not this server: ask the provider for a token whose audience is "https://kfa.example.com" or "https://kfa.example.com/mcp"`, "", "", ""},
		{"no audience", `{"iss":"https://idp.example.com","sub":"s","exp":` + at(time.Minute) + `,"scope":"read"}`,
			"(aud none) is not this server", "", "", ""},
		{"no kfa scope", `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","exp":` + at(time.Minute) + `,"scope":"openid profile admin"}`,
			`grants neither the "read" nor the "post" scope`, "read", "", ""},
		{"no scope at all", `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","exp":` + at(time.Minute) + `}`,
			`grants neither`, "read", "", ""},
		{"scope-like audience is no scope", `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","exp":` + at(time.Minute) + `,"scope":"read:all postman"}`,
			`grants neither`, "read", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c claims
			if err := json.Unmarshal([]byte(tc.claims), &c); err != nil {
				t.Fatal(err)
			}
			tok, err := checkClaims(c, p, now)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if strings.Join(tok.Scopes, " ") != tc.scopes || tok.Name != tc.named || tok.Subject != "s" || tok.Issuer != p.Issuer {
					t.Fatalf("token %+v", tok)
				}
				return
			}
			var r *Refusal
			if !errors.As(err, &r) || !errors.Is(err, ErrRefused) || !strings.Contains(r.Reason, tc.want) || r.Scope != tc.scope {
				t.Fatalf("err = %v (%+v), want a refusal saying %q, scope %q", err, r, tc.want, tc.scope)
			}
		})
	}
}

func jsonNum(t time.Time) string {
	b, _ := json.Marshal(t.Unix())
	return string(b)
}

func TestValidateIssuer(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://idp.example.com", true},
		{"https://idp.example.com/realms/kfa", true},
		{"https://tenant.auth0.com/", true},
		{"http://127.0.0.1:9000", true},
		{"http://[::1]:9000/x", true},
		{"http://localhost:8081", true},
		{"http://idp.example.com", false},
		{"http://10.0.0.1", false},
		{"ftp://idp.example.com", false},
		{"https://idp.example.com/?tenant=x", false},
		{"https://idp.example.com/#x", false},
		{"idp.example.com", false},
		{"https://u:p@idp.example.com", false},
	} {
		if err := ValidateIssuer(tc.url); (err == nil) != tc.ok {
			t.Errorf("ValidateIssuer(%q) = %v, want ok=%v", tc.url, err, tc.ok)
		}
	}
}

func TestMetadataURLs(t *testing.T) {
	for _, tc := range []struct {
		issuer string
		want   []string
	}{
		{"https://idp.example.com", []string{"https://idp.example.com/.well-known/oauth-authorization-server", "https://idp.example.com/.well-known/openid-configuration"}},
		{"https://idp.example.com/realms/kfa", []string{"https://idp.example.com/.well-known/oauth-authorization-server/realms/kfa", "https://idp.example.com/realms/kfa/.well-known/openid-configuration"}},
		{"https://tenant.auth0.com/", []string{"https://tenant.auth0.com/.well-known/oauth-authorization-server", "https://tenant.auth0.com/.well-known/openid-configuration"}},
	} {
		if got := MetadataURLs(tc.issuer); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("MetadataURLs(%q) = %q, want %q", tc.issuer, got, tc.want)
		}
	}
}

func TestLooksLikeJWT(t *testing.T) {
	for _, tc := range []struct {
		tok string
		ok  bool
	}{
		{"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzIn0.c2ln", true},
		{"eyJhbGciOiJub25lIn0.eyJzdWIiOiJzIn0.", true},
		{"kfa_abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrst", false},
		{"a.b", false},
		{"a.b.c.d", false},
		{"a b.c.d", false},
	} {
		if got := LooksLikeJWT(tc.tok); got != tc.ok {
			t.Errorf("LooksLikeJWT(%q) = %v", tc.tok, got)
		}
	}
}

// TestCheckClaimsDates: exp, nbf and iat are compared as numbers, so that
// no value wraps around: a date in the year 2300, 1e300 or a huge integer
// is far in the future, a negative one long ago, and anything that is not
// a finite JSON number is refused, saying which claim.
func TestCheckClaimsDates(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	p := Policy{Issuer: "https://idp.example.com", Audiences: []string{"https://kfa.example.com"}}
	hour := jsonNum(now.Add(time.Hour))
	const y2300 = "10413792000" // 2300-01-01T00:00:00Z
	for _, tc := range []struct {
		name  string
		dates string // the date claims, as JSON members
		want  string // a part of the refusal; "" accepts
	}{
		{"exp in the year 2300", `"exp":` + y2300, ""},
		{"exp 1e300", `"exp":1e300`, ""},
		{"exp a huge integer", `"exp":123456789012345678901234567890`, ""},
		{"exp with a fraction", `"exp":` + hour + `.25`, ""},
		{"exp negative", `"exp":-1`, "the token expired at 1969-12-31T23:59:59Z"},
		{"exp -1e300", `"exp":-1e300`, "the token expired at"},
		{"exp zero", `"exp":0`, "the token expired at 1970-01-01T00:00:00Z"},
		{"exp beyond float64", `"exp":1e400`, "exp is not a date"},
		{"exp a string", `"exp":"` + hour + `"`, "exp is not a date"},
		{"exp true", `"exp":true`, "exp is not a date"},
		{"exp an object", `"exp":{"n":1}`, "exp is not a date"},
		{"exp an array", `"exp":[` + hour + `]`, "exp is not a date"},
		{"exp null", `"exp":null`, "has no expiry"},
		{"nbf in the year 2300", `"exp":` + y2300 + `,"nbf":` + y2300, "not valid before 2300-01-01T00:00:00Z"},
		{"nbf 1e300", `"exp":1e301,"nbf":1e300`, "not valid before"},
		{"nbf a huge integer", `"exp":` + hour + `,"nbf":99999999999999999999999`, "not valid before"},
		{"nbf negative", `"exp":` + hour + `,"nbf":-1e300`, ""},
		{"nbf beyond float64", `"exp":` + hour + `,"nbf":-1e999`, "nbf is not a date"},
		{"nbf a string", `"exp":` + hour + `,"nbf":"soon"`, "nbf is not a date"},
		{"iat now", `"exp":` + hour + `,"iat":` + jsonNum(now), ""},
		{"iat within the skew", `"exp":` + hour + `,"iat":` + jsonNum(now.Add(MaxSkew)), ""},
		{"iat in the future", `"exp":` + hour + `,"iat":` + jsonNum(now.Add(MaxSkew+time.Second)), "issued in the future"},
		{"iat in the year 2300", `"exp":` + hour + `,"iat":` + y2300, "issued in the future"},
		{"iat 1e300", `"exp":` + hour + `,"iat":1e300`, "issued in the future"},
		{"iat negative", `"exp":` + hour + `,"iat":-5`, ""},
		{"iat a string", `"exp":` + hour + `,"iat":"now"`, "iat is not a date"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c claims
			js := `{"iss":"https://idp.example.com","sub":"s","aud":"https://kfa.example.com","scope":"read",` + tc.dates + `}`
			err := json.Unmarshal([]byte(js), &c)
			if err == nil {
				_, err = checkClaims(c, p, now)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var r *Refusal
			if !errors.As(err, &r) || !strings.Contains(r.Reason, tc.want) {
				t.Fatalf("err = %v, want a refusal saying %q", err, tc.want)
			}
		})
	}
}
