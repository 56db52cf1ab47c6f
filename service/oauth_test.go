package service

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/prototest"
)

func newOAuthService(t *testing.T, o *OAuth) *Service {
	t.Helper()
	s, err := New(Config{PublicURL: "https://kfa.example.com", Version: "test", ContributorWrites: true, OAuth: o},
		Deps{Now: func() time.Time { return time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCardOAuth: with no provider configured, nothing of OAuth appears;
// configured but not yet reached, the documents name it and the card has
// no scheme it could not fill; once reached, the card has one scheme per
// flow the provider offers, valid ProtoJSON, the ask skill says so, and
// the 0.3 card requires a token with post for ask.
func TestCardOAuth(t *testing.T) {
	plain := newOAuthService(t, nil)
	for name, doc := range map[string][]byte{"card": plain.Card().JSON, "info": plain.Info(), "llms.txt": plain.LLMsTxt(), "card03": plain.Card03()} {
		if bytes.Contains(bytes.ToLower(doc), []byte("oauth")) {
			t.Errorf("without an issuer, the %s mentions OAuth:\n%s", name, doc)
		}
	}

	o := OAuth{ResourceMetadataURL: "https://kfa.example.com/.well-known/oauth-protected-resource",
		MCPResourceMetadataURL: "https://kfa.example.com/.well-known/oauth-protected-resource/mcp",
		Issuers:                []OAuthIssuer{{Issuer: "https://idp.example.com"}, {Issuer: "https://login.example.org"}}}
	s := newOAuthService(t, &o)
	before := s.Card()
	if strings.Contains(string(before.JSON), "oauth2") {
		t.Fatalf("a provider not yet reached has a scheme: %s", before.JSON)
	}
	var info api.Info
	if err := json.Unmarshal(s.Info(), &info); err != nil {
		t.Fatal(err)
	}
	if info.OAuth == nil || info.OAuth.ResourceMetadata != o.ResourceMetadataURL || strings.Join(info.OAuth.Issuers, " ") != "https://idp.example.com https://login.example.org" ||
		strings.Join(info.OAuth.Scopes, " ") != "read post" {
		t.Fatalf("info %s", s.Info())
	}
	if !strings.Contains(string(s.LLMsTxt()), "OAuth 2.1 access tokens (JWT) of\nhttps://idp.example.com, https://login.example.org") {
		t.Fatalf("llms.txt:\n%s", s.LLMsTxt())
	}

	o.Issuers[0] = OAuthIssuer{Issuer: "https://idp.example.com", MetadataURL: "https://idp.example.com/.well-known/openid-configuration",
		AuthorizationURL: "https://idp.example.com/authorize", TokenURL: "https://idp.example.com/token", ClientCredentials: true, AuthorizationCode: true}
	o.Issuers[1] = OAuthIssuer{Issuer: "https://login.example.org", MetadataURL: "https://login.example.org/.well-known/oauth-authorization-server",
		TokenURL: "https://login.example.org/token", ClientCredentials: true}
	if err := s.SetOAuth(o); err != nil {
		t.Fatal(err)
	}
	after := s.Card()
	if after.ETag == before.ETag {
		t.Fatal("the card changed, its entity tag did not")
	}
	prototest.Valid(t, prototest.AgentCard, after.JSON)
	c := after.Card
	cc, code, second := c.SecuritySchemes[OAuthScheme].OAuth2, c.SecuritySchemes[OAuthCodeScheme].OAuth2, c.SecuritySchemes["oauth2-2"].OAuth2
	if cc == nil || cc.Flows.ClientCredentials == nil || cc.Flows.AuthorizationCode != nil || cc.Flows.ClientCredentials.TokenURL != "https://idp.example.com/token" ||
		cc.OAuth2MetadataURL != o.Issuers[0].MetadataURL || cc.Flows.ClientCredentials.Scopes["post"] == "" {
		t.Fatalf("client credentials scheme %+v", cc)
	}
	if code == nil || code.Flows.AuthorizationCode == nil || !code.Flows.AuthorizationCode.PKCERequired || code.Flows.AuthorizationCode.AuthorizationURL != "https://idp.example.com/authorize" {
		t.Fatalf("authorization code scheme %+v", code)
	}
	if second == nil || c.SecuritySchemes["oauth2AuthCode-2"].OAuth2 != nil || len(c.SecuritySchemes) != 5 {
		t.Fatalf("schemes %+v", c.SecuritySchemes)
	}
	if len(c.SecurityRequirements) != 0 {
		t.Fatalf("the 1.0 card has requirements a2a-go v2.3.1 cannot read: %+v", c.SecurityRequirements)
	}
	for _, sk := range c.Skills {
		if mentions := strings.Contains(sk.Description, `"oauth2" or "oauth2AuthCode" or "oauth2-2"`); mentions != (sk.ID == SkillAsk || sk.ID == SkillFeedback) {
			t.Fatalf("skill %s: %s", sk.ID, sk.Description)
		}
	}
	var c03 a2a.AgentCard03
	if err := json.Unmarshal(s.Card03(), &c03); err != nil {
		t.Fatal(err)
	}
	if sc := c03.SecuritySchemes[OAuthScheme]; sc.Type != "oauth2" || sc.Flows == nil || sc.Flows.ClientCredentials == nil || sc.OAuth2MetadataURL == "" {
		t.Fatalf("0.3 scheme %+v", sc)
	}
	security := func(reqs []map[string][]string) string {
		var parts []string
		for _, r := range reqs {
			for n, sc := range r {
				parts = append(parts, n+":"+strings.Join(sc, ","))
			}
			if len(r) == 0 {
				parts = append(parts, "{}")
			}
		}
		return strings.Join(parts, " ")
	}
	if got := security(c03.Security); got != "bearer: apiKey: oauth2:read oauth2-2:read oauth2AuthCode:read {}" {
		t.Fatalf("0.3 card security %s", got)
	}
	for _, sk := range c03.Skills {
		if sk.ID == SkillAsk {
			if got := security(sk.Security); got != "bearer: apiKey: oauth2:post oauth2-2:post oauth2AuthCode:post" {
				t.Fatalf("0.3 ask security %s", got)
			}
		}
	}
	if !strings.Contains(string(s.LLMsTxt()), "`oauth2`, `oauth2AuthCode`, `oauth2-2`") {
		t.Fatalf("llms.txt does not name the schemes:\n%s", s.LLMsTxt())
	}
}
