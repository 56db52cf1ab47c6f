package peers

import (
	"errors"
	"testing"
	"time"

	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/moderation"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{{0, 0}, {1, time.Second}, {2, 2 * time.Second}, {5, 16 * time.Second}, {9, 256 * time.Second}, {10, 5 * time.Minute}, {1000, 5 * time.Minute}} {
		if got := Backoff(tc.n); got != tc.want {
			t.Errorf("Backoff(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
}

func goodAdd() AddInput {
	return AddInput{Name: "b", URL: "HTTPS://B.Example.org/", Token: "kfa_abc", Follow: true}
}

var goodCard = Card{Name: "kfa on b", A2AURL: "https://b.example.org/a2a/v1"}

func TestDecideAdd(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mutate   func(*AddInput)
		card     Card
		existing *Peer
		field    string
		err      error
	}{
		{name: "ok", card: goodCard},
		{name: "a taken name", card: goodCard, existing: &Peer{Name: "b"}, err: ErrExists},
		{name: "a name with upper case", mutate: func(in *AddInput) { in.Name = "B" }, card: goodCard, field: "name"},
		{name: "a name starting with a digit", mutate: func(in *AddInput) { in.Name = "1b" }, card: goodCard, field: "name"},
		{name: "a long name", mutate: func(in *AddInput) { in.Name = "abcdefghijabcdefghijabcdefghijabc" }, card: goodCard, field: "name"},
		{name: "no URL", mutate: func(in *AddInput) { in.URL = "" }, card: goodCard, field: "url"},
		{name: "a file URL", mutate: func(in *AddInput) { in.URL = "file:///etc/passwd" }, card: goodCard, field: "url"},
		{name: "a URL with a user", mutate: func(in *AddInput) { in.URL = "https://u:p@b.example.org" }, card: goodCard, field: "url"},
		{name: "no token", mutate: func(in *AddInput) { in.Token = "" }, card: goodCard, field: "token"},
		{name: "a token with a newline", mutate: func(in *AddInput) { in.Token = "a\nb" }, card: goodCard, field: "token"},
		{name: "neither follow nor forward", mutate: func(in *AddInput) { in.Follow = false }, card: goodCard, field: "follow"},
		{name: "a bound too small", mutate: func(in *AddInput) { in.Bounds.MaxDocBytes = 10 }, card: goodCard, field: "maxDocBytes"},
		{name: "a negative rate", mutate: func(in *AddInput) { in.Bounds.DocsPerMinute = -1 }, card: goodCard, field: "maxDocsPerMinute"},
		{name: "a card without a name", card: Card{A2AURL: goodCard.A2AURL}, field: "url"},
		{name: "a card without an interface", card: Card{Name: "x"}, field: "url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := goodAdd()
			if tc.mutate != nil {
				tc.mutate(&in)
			}
			p, evs, err := DecideAdd(tc.existing, in, tc.card, t0)
			var ie *input.Error
			switch {
			case tc.err != nil:
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			case tc.field != "":
				if !errors.As(err, &ie) || ie.Field != tc.field {
					t.Fatalf("err = %v, want an input error of %s", err, tc.field)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if p.URL != "https://b.example.org" || p.Bounds != DefaultBounds || p.State() != StateOK || len(evs) != 1 ||
				evs[0].Kind != EventPeerChanged || p.AgentName != "kfa on b" || !p.AddedAt.Equal(t0) {
				t.Fatalf("peer %+v events %+v", p, evs)
			}
		})
	}
}

func TestPeerStateMachine(t *testing.T) {
	p, _, err := DecideAdd(nil, goodAdd(), goodCard, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := DecidePause("x", nil, t0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("pause of nothing: %v", err)
	}

	// Failing: backoff grows, the error is kept; success ends it.
	f := DecideFailure(p, JobFollow, "", "dial tcp: refused", t0)
	f = DecideFailure(f, JobFollow, "", "dial tcp: refused again", t0)
	if f.State() != StateFailing || f.Follower.Failures != 2 || !f.Follower.RetryAt.Equal(t0.Add(2*time.Second)) ||
		f.LastError != "dial tcp: refused again" {
		t.Fatalf("after two failures: %+v", f)
	}
	if _, ok := DecideLease(f, "h1", t0.Add(time.Second)); ok {
		t.Fatal("a lease before the backoff passed")
	}
	ok := DecideSuccess(f, JobFollow)
	if ok.State() != StateOK || ok.LastError == "" {
		t.Fatalf("after a success: %+v (the last error is kept)", ok)
	}
	fw := DecideFailure(p, JobForward, "", "500", t0)
	if fw.State() != StateFailing || fw.Follower.Failures != 0 {
		t.Fatalf("a forward failure: %+v", fw)
	}

	// Paused beats failing; resume retries at once.
	paused, evs, err := DecidePause("b", &f, t0)
	if err != nil || paused.State() != StatePaused || len(evs) != 1 {
		t.Fatalf("pause: %+v %v", paused, err)
	}
	if again, evs, _ := DecidePause("b", &paused, t0); len(evs) != 0 || again.State() != StatePaused {
		t.Fatal("pausing a paused peer changed something")
	}
	if _, ok := DecideLease(paused, "h1", t0.Add(time.Hour)); ok {
		t.Fatal("a lease on a paused peer")
	}
	resumed, _, _ := DecideResume("b", &paused, t0)
	if resumed.State() != StateFailing || !resumed.Follower.RetryAt.IsZero() {
		t.Fatalf("resume: %+v", resumed)
	}
	if _, ok := DecideLease(resumed, "h1", t0); !ok {
		t.Fatal("no lease on a resumed peer")
	}

	// Leases: one holder at a time until it runs out.
	l1, ok1 := DecideLease(p, "h1", t0)
	_, ok2 := DecideLease(l1, "h2", t0.Add(LeaseTTL-time.Millisecond))
	l3, ok3 := DecideLease(l1, "h2", t0.Add(LeaseTTL))
	if !ok1 || ok2 || !ok3 || l3.Lease != "h2" {
		t.Fatalf("leases: %v %v %v %+v", ok1, ok2, ok3, l3)
	}
	if _, ok := DecideLease(Peer{Name: "f", ForwardAsks: true}, "h1", t0); ok {
		t.Fatal("a lease on a peer that is not followed")
	}

	// Remove: the row goes, or stays as purging.
	rm, err := DecideRemove("b", &p, false, t0)
	if err != nil || rm.Keep != nil || rm.Events[0].Ref != RefRemoved {
		t.Fatalf("remove: %+v %v", rm, err)
	}
	pg, err := DecideRemove("b", &p, true, t0)
	if err != nil || pg.Keep == nil || !pg.Keep.Purging || pg.Keep.Token != "" || pg.Events[0].Ref != RefPurged {
		t.Fatalf("remove --purge: %+v %v", pg, err)
	}
	if _, _, err := DecideResume("b", pg.Keep, t0); !errors.Is(err, ErrNotFound) {
		t.Fatal("a peer being purged can be resumed")
	}
	if _, err := DecideRemove("b", pg.Keep, false, t0); !errors.Is(err, ErrNotFound) {
		t.Fatal("a peer being purged can be removed again without purge")
	}
	if p.Lag(t0.Add(3*time.Second)) != 3*time.Second {
		t.Fatalf("lag before the first pass: %s", p.Lag(t0.Add(3*time.Second)))
	}
}

func TestDecideModerateDocument(t *testing.T) {
	d := &Document{Key: DocumentKey(srvB, SourceRecord, "r1"), Peer: "b"}
	hide := moderation.Command{Action: moderation.ActionHide, Target: moderation.Target{ID: d.Key}, Reason: "off topic", At: t0}
	out, err := DecideModerate(d, hide)
	if err != nil || !out.Result.Changed || !out.Document.Hidden || out.Entry == nil || out.Entry.ItemKind != moderation.KindDocument ||
		len(out.Events) != 1 || out.Events[0].Kind != EventDocument {
		t.Fatalf("hide: %+v %v", out, err)
	}
	if again, _ := DecideModerate(out.Document, hide); again.Result.Changed || again.Document != nil {
		t.Fatalf("hide a hidden document: %+v", again)
	}
	unhide := hide
	unhide.Action = moderation.ActionUnhide
	if shown, _ := DecideModerate(out.Document, unhide); !shown.Result.Changed || shown.Document.Hidden {
		t.Fatalf("unhide: %+v", shown)
	}
	dismiss := hide
	dismiss.Action = moderation.ActionDismiss
	if none, _ := DecideModerate(d, dismiss); none.Result.Changed {
		t.Fatal("dismissed the flags of a document that has none")
	}
	var nf *moderation.ItemNotFoundError
	if _, err := DecideModerate(nil, hide); !errors.As(err, &nf) {
		t.Fatalf("hide nothing: %v", err)
	}
	if _, err := DecideModerate(&Document{Key: d.Key}, hide); !errors.As(err, &nf) {
		t.Fatalf("hide a placeholder: %v", err)
	}
}
