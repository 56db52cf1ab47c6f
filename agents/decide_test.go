package agents

import (
	"errors"
	"testing"
	"time"

	"github.com/kfa-project/kfa/changelog"
)

var t0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

func TestNameKey(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"alice", "alice", true},
		{"Alice", "aLICE", true},
		{" alice ", "alice", true},
		{"ſtar", "STAR", true}, // the long s folds to s
		{"alice", "alice2", false},
		{"alice bot", "alicebot", false},
	} {
		if got := NameKey(tc.a) == NameKey(tc.b); got != tc.same {
			t.Errorf("NameKey(%q) == NameKey(%q) is %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

func TestDecideCreate(t *testing.T) {
	c := Create{Agent: Agent{ID: "A2", Name: "alice", CreatedAt: t0}, Credential: Credential{AgentID: "A2", CreatedAt: t0}}
	out, err := DecideCreate(nil, c)
	if err != nil || out.Agent.ID != "A2" || len(out.Events) != 1 || out.Events[0].Kind != changelog.AgentCreated {
		t.Fatalf("a new name: %+v %v", out, err)
	}
	_, err = DecideCreate([]string{"A1"}, c)
	var dup *DuplicateNameError
	if !errors.Is(err, ErrDuplicateName) || !errors.As(err, &dup) || dup.ID != "A1" || dup.Name != "alice" {
		t.Fatalf("a taken name: %v", err)
	}
	c.AllowDuplicateName = true
	if _, err := DecideCreate([]string{"A1"}, c); err != nil {
		t.Fatalf("a taken name, allowed: %v", err)
	}
}

func TestDecideRotate(t *testing.T) {
	a := &Agent{ID: "A1", Name: "alice"}
	fresh := Credential{Digest: Digest{1}, AgentID: "A1", CreatedAt: t0.Add(-time.Hour)}
	graced := Credential{Digest: Digest{2}, AgentID: "A1", CreatedAt: t0.Add(-time.Hour), ExpiresAt: t0.Add(time.Minute)}
	expired := Credential{Digest: Digest{3}, AgentID: "A1", CreatedAt: t0.Add(-time.Hour), ExpiresAt: t0}
	longGrace := Credential{Digest: Digest{4}, AgentID: "A1", CreatedAt: t0.Add(-time.Hour), ExpiresAt: t0.Add(time.Hour)}
	add := Credential{Digest: Digest{9}, AgentID: "A1", CreatedAt: t0}
	creds := []Credential{fresh, graced, expired, longGrace}
	for _, tc := range []struct {
		name      string
		st        CredentialState
		keepUntil time.Time
		want      error
		deleted   []byte
		kept      map[byte]time.Time
	}{
		{"unknown agent", CredentialState{}, time.Time{}, ErrNotFound, nil, nil},
		{"revoked agent", CredentialState{Agent: &Agent{ID: "A1", DisabledAt: t0}}, time.Time{}, ErrDisabled, nil, nil},
		{"no grace: every old one ends", CredentialState{Agent: a, Credentials: creds}, time.Time{}, nil, []byte{1, 2, 3, 4}, nil},
		{"grace: live ones end at the grace, or earlier", CredentialState{Agent: a, Credentials: creds}, t0.Add(10 * time.Minute), nil,
			[]byte{3}, map[byte]time.Time{1: t0.Add(10 * time.Minute), 2: t0.Add(time.Minute), 4: t0.Add(10 * time.Minute)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := DecideRotate(tc.st, add, tc.keepUntil)
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if err != nil {
				return
			}
			if out.Add != add || len(out.Delete) != len(tc.deleted) || len(out.Keep) != len(tc.kept) || len(out.Events) != 1 {
				t.Fatalf("out %+v", out)
			}
			for i, d := range out.Delete {
				if d[0] != tc.deleted[i] {
					t.Fatalf("deleted %v", out.Delete)
				}
			}
			for _, k := range out.Keep {
				if want, ok := tc.kept[k.Digest[0]]; !ok || !k.ExpiresAt.Equal(want) {
					t.Fatalf("kept %x until %s", k.Digest[0], k.ExpiresAt)
				}
			}
			if ref := out.Events[0].Ref; (ref == "") != tc.keepUntil.IsZero() {
				t.Fatalf("event ref %q", ref)
			}
		})
	}
}

func TestDecideRevoke(t *testing.T) {
	if _, err := DecideRevoke(CredentialState{}, t0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	st := CredentialState{Agent: &Agent{ID: "A1"}, Credentials: []Credential{{Digest: Digest{1}}, {Digest: Digest{2}}}}
	out, err := DecideRevoke(st, t0)
	if err != nil || !out.Changed || !out.Agent.DisabledAt.Equal(t0) || len(out.Delete) != 2 || len(out.Events) != 1 ||
		out.Events[0].Kind != changelog.AgentRevoked || st.Agent.DisabledAt != (time.Time{}) {
		t.Fatalf("revoke: %+v %v", out, err)
	}
	again, err := DecideRevoke(CredentialState{Agent: &out.Agent}, t0.Add(time.Hour))
	if err != nil || again.Changed || len(again.Events) != 0 || !again.Agent.DisabledAt.Equal(t0) {
		t.Fatalf("revoke again: %+v %v", again, err)
	}
}
