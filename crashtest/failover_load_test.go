package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/pgha"
)

// newPair starts a primary and a synchronous streaming standby of its own
// (internal/pgha) with a database kfa, stopped and deleted when t ends.
// Like every PostgreSQL test it runs when KFA_TEST_POSTGRES says that the
// machine runs PostgreSQL servers (and fails without under
// KFA_REQUIRE_POSTGRES=1).
func newPair(t *testing.T) (c *pgha.Cluster, primary, standby *pgha.Node) {
	t.Helper()
	c = pgha.ForTest(t)
	primary, standby, err := c.Pair(context.Background(), "kfa")
	if err != nil {
		t.Fatal(err)
	}
	return c, primary, standby
}

// word is a made-up word of eight letters for (w, n), so that each
// question is found by its own word alone: two of them are never one
// typo apart, which the search would take for a misspelling.
func word(w, n int) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", w, n)
	x := h.Sum64()
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte('a' + x%26)
		x /= 26
	}
	return string(b)
}

// pace is the least time between two iterations of one client: enough
// load to have writes in flight at every moment of a failover, and few
// enough of them for the checks afterwards to take seconds.
const pace = 100 * time.Millisecond

// failLoad is the mixed load of the failover test, over every server:
// asks (every other with a push config), replies by another agent on
// the next server, cancels, flags, inbox acks, and a stream on some
// tasks (sseWatch). Its ledger holds what was acknowledged.
type failLoad struct {
	l      *ledger
	bases  []string
	tokens []string
	sse    *sseWatch

	mu        sync.Mutex
	questions map[string]string    // discussion id -> its question, for search
	flags     map[string]string    // discussion id -> the token of the agent whose flag was acknowledged
	at        map[string]time.Time // task id -> when its ask was acknowledged
}

func newFailLoad(l *ledger, bases, tokens []string) *failLoad {
	return &failLoad{l: l, bases: bases, tokens: tokens, sse: newSSEWatch(bases),
		questions: map[string]string{}, flags: map[string]string{}, at: map[string]time.Time{}}
}

// streamed is a task a stream watches, whose reply or cancel comes a
// moment later, so that streams are open when the database fails over.
type streamed struct {
	at       time.Time
	n        int
	tk       *a2a.Task
	disc     string
	asker, o *client.Client
}

// streamDelay is how long a streamed task waits for its transition.
const streamDelay = 1500 * time.Millisecond

// run drives n clients until stop closes.
func (f *failLoad) run(n int, stop <-chan struct{}) {
	var wg sync.WaitGroup
	later := make(chan streamed, 1024)
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.client(w, stop, later)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case s := <-later:
				select {
				case <-stop:
					return
				case <-time.After(time.Until(s.at)):
				}
				f.transition(context.Background(), s.n, s.asker, s.o, s.tk, s.disc)
			}
		}
	}()
	wg.Wait()
}

// transition replies to (n%3 == 0) or cancels (n%3 == 1) the task, and
// notes what was acknowledged.
func (f *failLoad) transition(ctx context.Context, n int, c, o *client.Client, tk *a2a.Task, disc string) {
	switch n % 3 {
	case 0:
		if r, err := o.Reply(ctx, disc, "Turn it off and on again."); err == nil {
			f.l.mu.Lock()
			f.l.replies[r.Reply.ID] = disc
			for _, id := range r.CompletedIDs {
				f.l.completed[id] = true
			}
			f.l.mu.Unlock()
		}
	case 1:
		if ct, err := c.CancelTask(ctx, tk.ID); err == nil && ct.Status.State == a2a.TaskStateCanceled {
			f.l.mu.Lock()
			f.l.canceled[tk.ID] = true
			f.l.mu.Unlock()
		}
	}
}

func (f *failLoad) client(w int, stop <-chan struct{}, later chan<- streamed) {
	me, other := f.tokens[w%len(f.tokens)], f.tokens[(w+1)%len(f.tokens)]
	hc := &http.Client{Timeout: 10 * time.Second}
	c := client.New(f.bases[w%len(f.bases)], client.WithToken(me), client.WithHTTPClient(hc))
	o := client.New(f.bases[(w+1)%len(f.bases)], client.WithToken(other), client.WithHTTPClient(hc))
	ctx := context.Background()
	tick := time.NewTicker(pace)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		q := fmt.Sprintf("How do I fix the %s problem?", word(w, n))
		data, _ := json.Marshal(map[string]any{"action": "ask", "question": q})
		yes := true
		cfg := &a2a.SendMessageConfiguration{ReturnImmediately: &yes}
		withPush := n%2 == 0
		if withPush {
			cfg.TaskPushNotificationConfig = json.RawMessage(`{"url":"` + f.l.pushTo + `","token":"failover"}`)
		}
		res, err := c.SendMessage(ctx, a2a.SendMessageRequest{Message: &a2a.Message{MessageID: ulid.Make().String(), Role: a2a.RoleUser,
			Parts: []a2a.Part{a2a.DataPart(data)}}, Configuration: cfg})
		if err != nil || res.Task == nil {
			continue
		}
		tk := res.Task
		var meta struct {
			DiscussionID string `json:"discussionId"`
		}
		_ = json.Unmarshal(tk.Metadata, &meta)
		f.l.mu.Lock()
		f.l.asked[tk.ID] = me
		if withPush {
			f.l.pushed[tk.ID] = true
		}
		f.l.mu.Unlock()
		f.mu.Lock()
		f.questions[meta.DiscussionID] = q
		f.at[tk.ID] = time.Now()
		f.mu.Unlock()
		if n%5 == 0 && n%3 != 2 && f.sse.add(tk.ID, me, w) {
			// Watched from before its transition, which comes a moment
			// later: the stream must deliver it, failover or not.
			select {
			case later <- streamed{at: time.Now().Add(streamDelay), n: n, tk: tk, disc: meta.DiscussionID, asker: c, o: o}:
			default:
				f.transition(ctx, n, c, o, tk, meta.DiscussionID)
			}
		} else {
			f.transition(ctx, n, c, o, tk, meta.DiscussionID)
		}
		if n%4 == 3 {
			if fr, err := o.Flag(ctx, meta.DiscussionID, "", "other", "failover test"); err == nil && !fr.AlreadyFlagged {
				f.mu.Lock()
				f.flags[meta.DiscussionID] = other
				f.mu.Unlock()
			}
		}
		if n%5 == 4 {
			if in, err := c.Inbox(ctx, true, 5, ""); err == nil && len(in.Entries) > 0 {
				ids := []string{in.Entries[0].ID}
				if res, err := c.Ack(ctx, ids); err == nil && len(res.Acked)+len(res.AlreadyAcked) == 1 {
					f.l.mu.Lock()
					f.l.acked[ids[0]] = me
					f.l.mu.Unlock()
				}
			}
		}
	}
}

// asks is how many asks were acknowledged so far.
func (f *failLoad) asks() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.at)
}

// firstAsk asks through base every 20 ms until an ask succeeds and
// returns when it did.
func firstAsk(base, token string, deadline time.Time) (time.Time, error) {
	c := client.New(base, client.WithToken(token), client.WithHTTPClient(&http.Client{Timeout: 5 * time.Second}))
	yes := true
	for {
		_, err := c.SendMessage(context.Background(), a2a.SendMessageRequest{
			Message: &a2a.Message{MessageID: ulid.Make().String(), Role: a2a.RoleUser,
				Parts: []a2a.Part{a2a.DataPart(json.RawMessage(`{"action":"ask","question":"Is the new primary there?"}`))}},
			Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: &yes}})
		if err == nil {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("no ask through %s succeeded: %v", base, err)
		}
		time.Sleep(20 * time.Millisecond) // a client retrying: the point of the probe
	}
}

// verifyFlags checks that every acknowledged flag is stored: its agent
// flagging the item again is told it had flagged it.
func (f *failLoad) verifyFlags(t *testing.T, base string) int {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for disc, tok := range f.flags {
		r, err := client.New(base, client.WithToken(tok)).Flag(context.Background(), disc, "", "other", "again")
		if err != nil || !r.AlreadyFlagged {
			t.Fatalf("acknowledged flag of discussion %s lost: %+v %v", disc, r, err)
		}
	}
	return len(f.flags)
}

// verifySearch checks that base's search finds each acknowledged ask's
// discussion by its question, once the index has the last one (it
// follows the change log, so it may lag a moment).
func (f *failLoad) verifySearch(t *testing.T, base string) int {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var last, lastQ string
	for d, q := range f.questions {
		if d > last {
			last, lastQ = d, q
		}
	}
	waitUntil(t, "search on "+base+" to find the newest discussion", func() bool { return slices.Contains(searchIDs(t, base, lastQ), last) })
	for d, q := range f.questions {
		if got := searchIDs(t, base, q); !slices.Contains(got, d) {
			disc, err := client.New(base).Discussion(context.Background(), d)
			t.Fatalf("search on %s does not find discussion %s by its question %q: it answers %v; the discussion: %+v %v",
				base, d, q, got, disc, err)
		}
	}
	return len(f.questions)
}

// searchIDs is the ids A2A search on base answers q with.
func searchIDs(t *testing.T, base, q string) []string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"action": "search", "query": q, "limit": 5})
	res, err := client.New(base).SendMessage(context.Background(), a2a.SendMessageRequest{Message: &a2a.Message{
		MessageID: ulid.Make().String(), Role: a2a.RoleUser, Parts: []a2a.Part{a2a.DataPart(b)}}})
	if err != nil || res.Message == nil {
		t.Fatalf("search on %s: %v", base, err)
	}
	var out struct {
		Results []struct {
			ID string `json:"id"`
		} `json:"results"`
	}
	for _, p := range res.Message.Parts {
		if p.Data != nil {
			_ = json.Unmarshal(p.Data, &out)
		}
	}
	var ids []string
	for _, r := range out.Results {
		ids = append(ids, r.ID)
	}
	return ids
}

// readyz returns /readyz's status and body on base.
func readyz(base string) (int, string) {
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}
