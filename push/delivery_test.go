package push

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/input"
)

func TestGapGrowsAndIsCapped(t *testing.T) {
	p := RetryPolicy{First: 2 * time.Second, Cap: time.Hour}
	for _, jitter := range []func(int64) int64{
		func(int64) int64 { return 0 },
		func(n int64) int64 { return n - 1 },
		func(n int64) int64 { return n / 3 },
	} {
		prev := time.Duration(0)
		for n := 1; n <= 30; n++ {
			g := p.Gap(n, jitter)
			if g <= prev && g < p.Cap/2 {
				t.Fatalf("gap %d (%s) does not grow past %s", n, g, prev)
			}
			if g > p.Cap || g < time.Second {
				t.Fatalf("gap %d is %s", n, g)
			}
			prev = g
		}
	}
	// The first retry comes within seconds.
	if g := p.Gap(1, func(n int64) int64 { return n - 1 }); g >= 2*time.Second {
		t.Fatalf("first gap %s", g)
	}
}

func TestDecide(t *testing.T) {
	p := RetryPolicy{First: 2 * time.Second, Cap: time.Hour, For: 24 * time.Hour}
	created := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	none := func(int64) int64 { return 0 }
	for _, tc := range []struct {
		name    string
		r       Response
		n       int
		at      time.Time
		outcome Outcome
		next    time.Duration // after at, for retries
		errPart string
	}{
		{"200", Response{Status: 200}, 1, created, OutcomeDelivered, 0, ""},
		{"204", Response{Status: 204}, 3, created, OutcomeDelivered, 0, ""},
		{"503", Response{Status: 503}, 1, created, OutcomeRetry, time.Second, "503"},
		{"429 with Retry-After", Response{Status: 429, RetryAfter: 2 * time.Minute}, 1, created, OutcomeRetry, 2 * time.Minute, "429"},
		{"Retry-After shorter than the gap", Response{Status: 503, RetryAfter: time.Second}, 5, created, OutcomeRetry, 16 * time.Second, ""},
		{"408", Response{Status: 408}, 2, created, OutcomeRetry, 2 * time.Second, ""},
		{"500", Response{Status: 500}, 1, created, OutcomeRetry, time.Second, ""},
		{"connection error", Response{Err: errors.New("connect: refused")}, 1, created, OutcomeRetry, time.Second, "refused"},
		{"410", Response{Status: 410}, 1, created, OutcomeFailed, 0, "410"},
		{"400", Response{Status: 400}, 1, created, OutcomeFailed, 0, "400"},
		{"401", Response{Status: 401}, 1, created, OutcomeFailed, 0, ""},
		{"302", Response{Status: 302}, 1, created, OutcomeFailed, 0, "redirects are not followed"},
		{"refused destination", Response{Err: errors.New("loopback"), Refused: true}, 1, created, OutcomeFailed, 0, "loopback"},
		{"retry period used up", Response{Status: 503}, 40, created.Add(23*time.Hour + 59*time.Minute), OutcomeFailed, 0, "gave up after 40 attempts"},
		{"Retry-After beyond the period", Response{Status: 429, RetryAfter: 48 * time.Hour}, 1, created, OutcomeFailed, 0, "gave up after 1 attempt over"},
	} {
		a := p.Decide(tc.r, tc.n, created, tc.at, time.Millisecond, none)
		if a.Outcome != tc.outcome || !strings.Contains(a.Error, tc.errPart) || a.At != tc.at || a.Status != tc.r.Status || a.N != tc.n {
			t.Errorf("%s: %+v", tc.name, a)
		}
		if tc.outcome == OutcomeRetry && a.NextAt.Sub(tc.at) != tc.next {
			t.Errorf("%s: next attempt after %s, want %s", tc.name, a.NextAt.Sub(tc.at), tc.next)
		}
		if tc.outcome != OutcomeRetry && !a.NextAt.IsZero() {
			t.Errorf("%s: a final attempt has a next time", tc.name)
		}
	}
}

func TestApply(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	d := Delivery{State: Pending, CreatedAt: at, NextAt: at}
	for i := range MaxRecentAttempts + 5 {
		d.Apply(Attempt{At: at.Add(time.Duration(i) * time.Second), Outcome: OutcomeRetry, NextAt: at.Add(time.Hour)})
	}
	if d.Attempts != MaxRecentAttempts+5 || len(d.Recent) != MaxRecentAttempts || d.Recent[0].At != at.Add(5*time.Second) ||
		d.State != Pending || d.NextAt != at.Add(time.Hour) {
		t.Fatalf("after retries: %+v", d)
	}
	d.Apply(Attempt{At: at.Add(2 * time.Hour), Outcome: OutcomeFailed, Error: "gone"})
	if d.State != Failed || d.Reason != "gone" || !d.NextAt.IsZero() || d.FinishedAt != at.Add(2*time.Hour) {
		t.Fatalf("failed: %+v", d)
	}
	if d.RetryFrom() != at {
		t.Fatal("retry period starts at the transition")
	}
	d.RetriedAt = at.Add(3 * time.Hour)
	if d.RetryFrom() != d.RetriedAt {
		t.Fatal("an operator retry starts a new period")
	}
}

func TestNewConfig(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	good := a2a.TaskPushNotificationConfig{URL: "https://hooks.example.com/k", Token: "t",
		Authentication: &a2a.PushAuthentication{Scheme: "Bearer", Credentials: "abc def"}}
	c, err := NewConfig(good, Policy{}, "", now)
	if err != nil || c.ID == "" || c.AuthScheme != "Bearer" || c.AuthCredentials != "abc def" || c.Token != "t" || !c.CreatedAt.Equal(now) {
		t.Fatalf("%+v %v", c, err)
	}
	if w := c.Wire(); w.Authentication == nil || w.Authentication.Credentials != "" || w.Token != "t" {
		t.Fatalf("wire shows the credentials: %+v", w.Authentication)
	}
	for _, tc := range []struct {
		name  string
		in    a2a.TaskPushNotificationConfig
		field string
	}{
		{"no url", a2a.TaskPushNotificationConfig{}, "p.url"},
		{"long url", a2a.TaskPushNotificationConfig{URL: "https://x.example/" + strings.Repeat("a", MaxURLBytes)}, "p.url"},
		{"loopback", a2a.TaskPushNotificationConfig{URL: "https://127.0.0.1/"}, "p.url"},
		{"bad id", a2a.TaskPushNotificationConfig{ID: "a b", URL: "https://x.example/"}, "p.id"},
		{"dot id", a2a.TaskPushNotificationConfig{ID: "..", URL: "https://x.example/"}, "p.id"},
		{"long id", a2a.TaskPushNotificationConfig{ID: strings.Repeat("a", MaxIDBytes+1), URL: "https://x.example/"}, "p.id"},
		{"token with a newline", a2a.TaskPushNotificationConfig{URL: "https://x.example/", Token: "a\nb"}, "p.token"},
		{"long token", a2a.TaskPushNotificationConfig{URL: "https://x.example/", Token: strings.Repeat("a", MaxTokenBytes+1)}, "p.token"},
		{"scheme with a space", a2a.TaskPushNotificationConfig{URL: "https://x.example/",
			Authentication: &a2a.PushAuthentication{Scheme: "Bea rer"}}, "p.authentication.scheme"},
		{"credentials but no scheme", a2a.TaskPushNotificationConfig{URL: "https://x.example/",
			Authentication: &a2a.PushAuthentication{Credentials: "x"}}, "p.authentication.scheme"},
		{"credentials with CRLF", a2a.TaskPushNotificationConfig{URL: "https://x.example/",
			Authentication: &a2a.PushAuthentication{Scheme: "Basic", Credentials: "x\r\nX-Evil: 1"}}, "p.authentication.credentials"},
		{"credentials not ASCII", a2a.TaskPushNotificationConfig{URL: "https://x.example/",
			Authentication: &a2a.PushAuthentication{Scheme: "Basic", Credentials: "é"}}, "p.authentication.credentials"},
	} {
		_, err := NewConfig(tc.in, Policy{}, "p.", now)
		var ie *input.Error
		if !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("%s: %v, want a bad %s", tc.name, err, tc.field)
		}
	}
	// An empty authentication object is none.
	c, err = NewConfig(a2a.TaskPushNotificationConfig{URL: "https://x.example/", Authentication: &a2a.PushAuthentication{}}, Policy{}, "", now)
	if err != nil || c.AuthScheme != "" {
		t.Fatalf("empty authentication: %+v %v", c, err)
	}
}

// TestRecorded: an attempt is recorded once the delivery counts its
// number; an unnumbered attempt never is.
func TestRecorded(t *testing.T) {
	d := Delivery{Attempts: 2}
	for _, tc := range []struct {
		n    int
		want bool
	}{{0, false}, {1, true}, {2, true}, {3, false}} {
		if got := d.Recorded(Attempt{N: tc.n}); got != tc.want {
			t.Errorf("attempt %d of a delivery with 2: recorded %v, want %v", tc.n, got, tc.want)
		}
	}
}
