package server

import (
	"strings"
	"testing"
	"time"
)

func TestValidateLogRetention(t *testing.T) {
	tests := []struct {
		name string
		v    time.Duration
		want string // "" for valid
	}{
		{"the default", DefaultConfig().LogRetention, ""},
		{"zero keeps everything", 0, ""},
		{"a week", 7 * 24 * time.Hour, ""},
		{"negative", -time.Hour, "log-retention: -1h0m0s must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			c.LogRetention = tt.v
			err := c.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
	if DefaultConfig().LogRetention != 720*time.Hour {
		t.Fatalf("default retention %s, want 720h (30 days)", DefaultConfig().LogRetention)
	}
}

func TestValidateOAuth(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *Config)
		want string // "" for valid
	}{
		{"none", func(*Config) {}, ""},
		{"an https issuer", func(c *Config) { c.OAuthIssuers = []string{"https://idp.example.com/realms/kfa"} }, ""},
		{"a loopback http issuer", func(c *Config) { c.OAuthIssuers = []string{"http://127.0.0.1:9000"} }, ""},
		{"plain http elsewhere", func(c *Config) { c.OAuthIssuers = []string{"http://idp.example.com"} },
			"oauth-issuer: http://idp.example.com is plain http on a host that is not loopback"},
		{"twice", func(c *Config) { c.OAuthIssuers = []string{"https://a.example", "https://a.example"} }, "is given twice"},
		{"plain JWT of no issuer", func(c *Config) {
			c.OAuthIssuers, c.OAuthPlainJWTIssuers = []string{"https://idp.example.com"}, []string{"https://idp.example.com/"}
		}, "oauth-plain-jwt-issuer: https://idp.example.com/ is not an --oauth-issuer"},
		{"plain JWT of an issuer", func(c *Config) {
			c.OAuthIssuers, c.OAuthPlainJWTIssuers = []string{"https://idp.example.com"}, []string{"https://idp.example.com"}
		}, ""},
		{"agent scopes of no issuer", func(c *Config) {
			c.OAuthIssuers, c.OAuthWebClientID = []string{"https://idp.example.com"}, "kfa-web"
			c.OAuthWebAgentScopes = []string{"https://accounts.google.com"}
		}, "oauth-web-agent-scopes: https://accounts.google.com is not an --oauth-issuer"},
		{"agent scopes without a web client", func(c *Config) {
			c.OAuthIssuers, c.OAuthWebAgentScopes = []string{"https://accounts.google.com"}, []string{"https://accounts.google.com"}
		}, "oauth-web-agent-scopes: needs --oauth-web-client-id"},
		{"audience without issuer", func(c *Config) { c.OAuthAudiences = []string{"api://kfa"} }, "oauth-audience: needs --oauth-issuer"},
		{"audience with a space", func(c *Config) {
			c.OAuthIssuers, c.OAuthAudiences = []string{"https://a.example"}, []string{"a b"}
		}, "is not a resource identifier"},
		{"web client without issuer", func(c *Config) { c.OAuthWebClientID = "kfa-web" }, "oauth-web-client-id: needs --oauth-issuer"},
		{"secret without client", func(c *Config) {
			c.OAuthIssuers, c.OAuthWebClientSecret = []string{"https://a.example"}, "s"
		}, "a secret without --oauth-web-client-id"},
		{"web client without the web", func(c *Config) {
			c.OAuthIssuers, c.OAuthWebClientID, c.Web = []string{"https://a.example"}, "kfa-web", false
		}, "the web view is off"},
		{"web client", func(c *Config) {
			c.OAuthIssuers, c.OAuthWebClientID, c.OAuthWebClientSecret = []string{"https://a.example"}, "kfa-web", "s"
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
	c := DefaultConfig()
	c.PublicURL = "https://kfa.example.com/"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.OAuthAudienceList(), " "); got != "https://kfa.example.com https://kfa.example.com/mcp" {
		t.Fatalf("default audiences %q", got)
	}
	c.OAuthAudiences = []string{"api://kfa"}
	if got := strings.Join(c.OAuthAudienceList(), " "); got != "api://kfa" {
		t.Fatalf("audiences %q", got)
	}
}
