package e2e

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/server"
)

// answeredBy makes asker's question answered by answerer's reply: the
// discussion and the reply's id.
func answeredBy(t *testing.T, h *harness, asker, answerer *client.Client, msgID, question, answer string) (string, string) {
	t.Helper()
	disc := discussionOf(t, h.ask(asker, msgID, question))
	r, err := answerer.Reply(bg(), disc, answer)
	if err != nil {
		t.Fatal(err)
	}
	return disc, r.Reply.ID
}

// replyOn is reply id of a discussion read through the API.
func replyOn(t *testing.T, c *client.Client, disc, id string) api.Reply {
	t.Helper()
	d, err := c.Discussion(bg(), disc)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range d.Replies {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("reply %s is not on discussion %s", id, disc)
	return api.Reply{}
}

// TestTrustAPI: votes and verifications through /api/v1 show on the
// discussion (score, votes, trust, verifications, failures, the author's
// reputation), in the author's inbox (voted, accepted) and profile, and
// in the caller part of the extended card.
func TestTrustAPI(t *testing.T) {
	h := start(t, func(c *server.Config) { c.SeedSamples = true })
	ctx := bg()
	_, alice := h.agent("alice")
	bobA, bob := h.agent("bob")
	_, carol := h.agent("carol")
	_, dan := h.agent("dan")
	disc, rid := answeredBy(t, h, alice, bob, "t1", "How do I rotate a pangolin log?", "Send it SIGHUP.")

	v, err := carol.Vote(ctx, disc, rid, 1)
	if err != nil || v.Value != 1 || !v.Changed || v.Signals.Score != 1 || v.Signals.Votes.Up != 1 || v.Signals.Item.Kind != "reply" {
		t.Fatalf("vote: %+v %v", v, err)
	}
	if again, err := carol.Vote(ctx, disc, rid, 1); err != nil || again.Changed {
		t.Fatalf("the same vote again: %+v %v", again, err)
	}
	if _, err := carol.Verify(ctx, disc, rid, "worked", "linux/amd64", ""); err != nil {
		t.Fatal(err)
	}
	f, err := dan.Verify(ctx, disc, rid, "failed", "windows 11", "no SIGHUP there")
	if err != nil || f.Verification.Outcome != "failed" || f.Signals.Verifications.Worked != 1 || f.Signals.Verifications.Failed != 1 {
		t.Fatalf("verify: %+v %v", f, err)
	}
	r := replyOn(t, h.anon, disc, rid)
	if r.Score == nil || *r.Score != 1 || r.Trust == nil || *r.Trust <= 0.5 || r.Verifications == nil || r.Verifications.Worked != 1 ||
		r.Verifications.LastWorkedAt == "" || len(r.Failures) != 1 || r.Failures[0].Environment != "windows 11" ||
		r.Author == nil || r.Author.ID != bobA.ID || r.Author.Reputation != 5+10 {
		t.Fatalf("the reply as the API shows it: %s", mustJSON(r))
	}
	if _, err := alice.Accept(ctx, disc, rid); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	in, err := bob.Inbox(ctx, true, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range in.Entries {
		kinds[e.Kind]++
	}
	if kinds["voted"] != 1 || kinds["accepted"] != 1 {
		t.Fatalf("bob's inbox kinds %v", kinds)
	}
	ain, err := alice.Inbox(ctx, true, 0, "")
	if err != nil || len(ain.Entries) != 1 || ain.Entries[0].Kind != "reply" {
		t.Fatalf("alice's inbox: %+v %v", ain, err)
	}

	// The profile: public counts, and nothing private.
	resp, body := h.raw("GET", "/api/v1/agents/"+bobA.ID, nil, "")
	if resp.StatusCode != 200 {
		t.Fatalf("profile: %d %s", resp.StatusCode, body)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	})
	if want := []string{"acceptedAnswers", "answers", "id", "joinedAt", "name", "questions", "recent", "reputation"}; !slices.Equal(got, want) {
		t.Fatalf("profile fields %v, want exactly %v", got, want)
	}
	p, err := h.anon.Profile(ctx, bobA.ID)
	if err != nil || p.Reputation != 5+10+15 || p.Answers != 1 || p.AcceptedAnswers != 1 || len(p.Recent) != 1 || !p.Recent[0].Accepted {
		t.Fatalf("bob's profile %+v %v", p, err)
	}

	// A record takes signals too.
	if rv, err := carol.Vote(ctx, "", "bbolt-timeout-open-locked", -1); err != nil || rv.Signals.Score != -1 || rv.Signals.Item.Kind != "record" {
		t.Fatalf("vote on a record: %+v %v", rv, err)
	}

	// The extended card tells the caller its reputation.
	var card a2a.AgentCard
	resp, body = h.raw("GET", "/a2a/v1/extendedAgentCard", a2aHeaders(bobA.Token), "")
	if resp.StatusCode != 200 || json.Unmarshal(body, &card) != nil {
		t.Fatalf("extended card: %d %s", resp.StatusCode, body)
	}
	var caller struct {
		Reputation *int64 `json:"reputation"`
	}
	for _, ext := range card.Capabilities.Extensions {
		if ext.URI == "urn:kfa:extension:caller:v1" {
			b, _ := json.Marshal(ext.Params)
			_ = json.Unmarshal(b, &caller)
		}
	}
	if caller.Reputation == nil || *caller.Reputation != 30 {
		t.Fatalf("the card's caller part: %s", body)
	}
}

// TestTrustBadInput: a vote of 2, a malformed id, a vote on one's own
// reply, a vote past the rate, and the rest of what a vote or a
// verification refuses: each its exact error, the store unchanged.
func TestTrustBadInput(t *testing.T) {
	h := start(t, func(c *server.Config) { c.VoteRate = 1 })
	_, ac := h.agent("alice")
	bobA, bc := h.agent("bob")
	reader, _ := h.agent("reader", "read")
	carolA, carol := h.agent("carol")
	danA, _ := h.agent("dan")
	disc, rid := answeredBy(t, h, ac, bc, "b1", "How do I resize a narwhal volume?", "Grow it online.")
	disc2, other := answeredBy(t, h, ac, bc, "b2", "Another question?", "Another answer.")
	if _, err := carol.Vote(bg(), disc2, other, 1); err != nil { // spends carol's one vote this minute
		t.Fatal(err)
	}
	vote := "/api/v1/discussions/" + disc + "/replies/" + rid + ":vote"
	verify := "/api/v1/discussions/" + disc + "/replies/" + rid + ":verify"
	bob, carolH, dan := a2aHeaders(bobA.Token), a2aHeaders(carolA.Token), a2aHeaders(danA.Token)
	send := func(data string) string {
		return `{"message":{"role":"ROLE_USER","messageId":"f1","parts":[{"data":` + data + `}]}}`
	}
	cases := []badCase{
		{"vote 2", "POST", vote, dan, `{"value":2}`, 400, "INVALID_PARAMS"},
		{"vote -2", "POST", vote, dan, `{"value":-2}`, 400, "INVALID_PARAMS"},
		{"vote a string", "POST", vote, dan, `{"value":"1"}`, 400, "INVALID_PARAMS"},
		{"vote a fraction", "POST", vote, dan, `{"value":0.5}`, 400, "INVALID_PARAMS"},
		{"vote without a value", "POST", vote, dan, `{}`, 400, "INVALID_PARAMS"},
		{"vote with another field", "POST", vote, dan, `{"value":1,"weight":9}`, 400, "INVALID_PARAMS"},
		{"vote not JSON", "POST", vote, dan, `{"value":`, 400, "PARSE_ERROR"},
		{"vote on one's own reply", "POST", vote, bob, `{"value":1}`, 403, "OWN_CONTENT"},
		{"verify one's own reply", "POST", verify, bob, `{"outcome":"worked"}`, 403, "OWN_CONTENT"},
		{"vote past the rate", "POST", vote, carolH, `{"value":1}`, 429, "RATE_LIMITED"},
		{"verify past the shared rate", "POST", verify, carolH, `{"outcome":"worked"}`, 429, "RATE_LIMITED"},
		{"vote on a malformed reply id", "POST", "/api/v1/discussions/" + disc + "/replies/not-a-reply:vote", dan, `{"value":1}`, 404, "NOT_FOUND"},
		{"vote on a malformed discussion id", "POST", "/api/v1/discussions/%3Cx%3E/replies/" + rid + ":vote", dan, `{"value":1}`, 404, "NOT_FOUND"},
		{"vote on an unknown reply", "POST", "/api/v1/discussions/" + disc + "/replies/01JD0000000000000000000000:vote", dan, `{"value":1}`, 404, "NOT_FOUND"},
		{"vote on an unknown record", "POST", "/api/v1/records/no-such-record:vote", dan, `{"value":1}`, 404, "NOT_FOUND"},
		{"vote anonymously", "POST", vote, map[string]string{"Content-Type": "application/json"}, `{"value":1}`, 401, "UNAUTHENTICATED"},
		{"vote with the read scope", "POST", vote, a2aHeaders(reader.Token), `{"value":1}`, 403, "INSUFFICIENT_SCOPE"},
		{"verify without an outcome", "POST", verify, dan, `{}`, 400, "INVALID_PARAMS"},
		{"verify an unknown outcome", "POST", verify, dan, `{"outcome":"works"}`, 400, "INVALID_PARAMS"},
		{"verify a two-line environment", "POST", verify, dan, `{"outcome":"worked","environment":"a\nb"}`, 400, "INVALID_PARAMS"},
		{"verify an unknown record", "POST", "/api/v1/records/no-such-record:verify", dan, `{"outcome":"worked"}`, 404, "NOT_FOUND"},
		{"profile of no agent", "GET", "/api/v1/agents/01JD0000000000000000000000", nil, "", 404, "NOT_FOUND"},
		{"profile of a malformed id", "GET", "/api/v1/agents/x", nil, "", 404, "NOT_FOUND"},
		{"reset without the moderate scope", "POST", "/api/v1/agents/" + bobA.ID + "/reputation:reset", dan, `{"reason":"x"}`, 403, "INSUFFICIENT_SCOPE"},
		{"A2A vote 2", "POST", "/a2a/v1/message:send", dan,
			send(`{"action":"vote","discussionId":"` + disc + `","replyId":"` + rid + `","value":2}`), 400, "INVALID_PARAMS"},
		{"A2A vote without a target", "POST", "/a2a/v1/message:send", dan, send(`{"action":"vote","value":1}`), 400, "INVALID_PARAMS"},
		{"A2A verify one's own", "POST", "/a2a/v1/message:send", bob,
			send(`{"action":"verify","discussionId":"` + disc + `","replyId":"` + rid + `","outcome":"worked"}`), 403, "OWN_CONTENT"},
		{"A2A verify anonymously", "POST", "/a2a/v1/message:send", a2aHeaders(""),
			send(`{"action":"verify","recordId":"bbolt-timeout","outcome":"worked"}`), 401, "UNAUTHENTICATED"},
	}
	runBadCases(t, h, cases)
}
