package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeOAuthSecret: the web client's secret comes from a file or the
// environment, never from a flag value; kfa serve refuses an ambiguous or
// missing source before it starts anything.
func TestServeOAuthSecret(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(vars map[string]string, args ...string) result {
		var out, errb bytes.Buffer
		e := env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
		code := runEnv(context.Background(), e, append([]string{"serve", "--data", filepath.Join(dir, "data")}, args...))
		return result{code: code, stdout: out.String(), stderr: errb.String()}
	}
	base := []string{"--oauth-issuer", "https://idp.example.com", "--oauth-web-client-id", "kfa-web"}
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"no flag takes the secret", nil, append(base, "--oauth-web-client-secret", "s3cret"), "unknown flag --oauth-web-client-secret"},
		{"file and environment", map[string]string{oauthSecretEnv: "x"}, append(base, "--oauth-web-client-secret-file", secret),
			"--oauth-web-client-secret-file and KFA_OAUTH_WEB_CLIENT_SECRET are both set"},
		{"missing file", nil, append(base, "--oauth-web-client-secret-file", filepath.Join(dir, "nope")), "--oauth-web-client-secret-file: open"},
		{"empty file", nil, append(base, "--oauth-web-client-secret-file", empty), "is empty"},
		{"a secret without a client", map[string]string{oauthSecretEnv: "x"}, []string{"--oauth-issuer", "https://idp.example.com"},
			"a secret without --oauth-web-client-id"},
		{"plain JWT of another issuer", nil, []string{"--oauth-issuer", "https://idp.example.com", "--oauth-plain-jwt-issuer", "https://other.example.com"},
			"oauth-plain-jwt-issuer: https://other.example.com is not an --oauth-issuer"},
		{"plain http issuer", map[string]string{"KFA_OAUTH_ISSUER": "http://idp.example.com"}, nil, "is plain http on a host that is not loopback"},
	} {
		r := run(tc.vars, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "s3cret") {
			t.Errorf("%s: want exit 2 and %q: %s", tc.name, tc.want, r)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Fatalf("a refused start made the data directory: %v", err)
	}
}

// TestServeHelpSaysWhereLimitsCount: kfa serve --help says which limits
// each process counts on its own (with several processes on PostgreSQL
// an agent gets each one's) and which hold across every process.
func TestServeHelpSaysWhereLimitsCount(t *testing.T) {
	var out, errb bytes.Buffer
	e := env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	runEnv(context.Background(), e, []string{"serve", "--help"})
	help := out.String() + errb.String()
	for flag, says := range map[string]string{
		"-request-rate": "counted by each process on its own", "-search-rate": "counted by each process on its own",
		"-auth-fail-rate": "counted by each process on its own", "-max-streams": "in each process",
		"-max-streams-per-agent": "in each process", "-ask-rate": "across every process", "-reply-rate": "across every process",
		"-flag-rate": "across every process", "-max-open-tasks": "across every process",
	} {
		i := strings.Index(help, " -"+flag+" ")
		if i < 0 {
			t.Fatalf("no %s in the help:\n%s", flag, help)
		}
		next := strings.Index(help[i+3:], " --")
		if next < 0 {
			next = len(help) - i - 3
		}
		if line := strings.Join(strings.Fields(help[i:i+3+next]), " "); !strings.Contains(line, says) {
			t.Errorf("%s does not say %q: %s", flag, says, line)
		}
	}
}
