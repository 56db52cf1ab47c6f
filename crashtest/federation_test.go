package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
)

// fedPrefix starts every question of the federation crash test.
const fedPrefix = "fed crash question "

// fedAsk asks on A, in turn, until stop closes; an acknowledged ask's
// task is kept.
func fedAsk(base, token string, cycle, w int, asked *sync.Map, stop <-chan struct{}) {
	c := client.New(base, client.WithToken(token), client.WithHTTPClient(&http.Client{Timeout: 10 * time.Second}))
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		yes := true
		data, _ := json.Marshal(map[string]any{"action": "ask", "question": fmt.Sprintf("%s%d/%d/%d", fedPrefix, cycle, w, n)})
		res, err := c.SendMessage(context.Background(), a2a.SendMessageRequest{
			Message:       &a2a.Message{MessageID: fmt.Sprintf("fed-%d-%d-%d", time.Now().UnixNano(), w, n), Role: a2a.RoleUser, Parts: []a2a.Part{a2a.DataPart(data)}},
			Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: &yes},
		})
		if err == nil && res.Task != nil {
			asked.Store(res.Task.ID, token)
		}
		time.Sleep(20 * time.Millisecond) // a steady trickle, not a flood
	}
}

// fedAnswer replies on B, once, to every open question A forwarded there,
// until stop closes.
func fedAnswer(base, token string, stop <-chan struct{}) {
	c := client.New(base, client.WithToken(token), client.WithHTTPClient(&http.Client{Timeout: 10 * time.Second}))
	for {
		select {
		case <-stop:
			return
		default:
		}
		fedAnswerOpen(c)
		time.Sleep(100 * time.Millisecond) // polling another process
	}
}

// fedAnswerOpen replies to each open forwarded question on c's server.
func fedAnswerOpen(c *client.Client) {
	ctx := context.Background()
	tok := ""
	for {
		l, err := c.Discussions(ctx, "open", 100, tok)
		if err != nil {
			return
		}
		for _, d := range l.Discussions {
			if strings.HasPrefix(d.Title, fedPrefix) {
				_, _ = c.Reply(ctx, d.ID, "answered on B: "+d.Title)
			}
		}
		if tok = l.NextPageToken; tok == "" {
			return
		}
	}
}

// fedDiscussions is every discussion of c's server asked by the test, by
// title.
func fedDiscussions(t *testing.T, c *client.Client) map[string][]api.Discussion {
	t.Helper()
	out := map[string][]api.Discussion{}
	tok := ""
	for {
		l, err := c.Discussions(context.Background(), "", 100, tok)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range l.Discussions {
			if strings.HasPrefix(d.Title, fedPrefix) {
				out[d.Title] = append(out[d.Title], d)
			}
		}
		if tok = l.NextPageToken; tok == "" {
			return out
		}
	}
}

// fedPeer is the peer name in the peer list of the server at data.
func fedPeer(t *testing.T, bin, data, name string) api.Peer {
	t.Helper()
	var l api.PeerList
	if err := json.Unmarshal(run(t, bin, "peer", "list", "--data", data, "--json"), &l); err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Peers {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no peer %s", name)
	return api.Peer{}
}

// fedRecords counts the records of the feed of the server at base.
func fedRecords(t *testing.T, base string) int {
	t.Helper()
	c := client.New(base)
	n, cursor := 0, ""
	for range 10000 {
		p, err := c.Changes(context.Background(), cursor, 500)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range p.Changes {
			if ch.Source == "record" && ch.Op == "upsert" {
				n++
			}
		}
		if cursor = p.NextCursor; !p.HasMore {
			return n
		}
	}
	t.Fatal("the feed never ends")
	return 0
}

// TestFederationSurvivesKill: A follows B and forwards its asks to B; B
// follows A. Asks on A, answers on B to the forwarded questions, and
// record imports on B run while A or B (in turn, at random moments) is
// killed with SIGKILL and restarted. Then: every question of A is asked
// on B exactly once; every one of A's discussions has exactly the one
// answer B gave it, and every acknowledged task on A is completed; A
// follows exactly B's records (the follower's documents match its
// cursor), B follows none of A's own questions back; kfa check passes on
// both.
func TestFederationSurvivesKill(t *testing.T) {
	cycles := crashCycles(t)
	dir := t.TempDir()
	bin := buildKFA(t, dir)
	dataA, dataB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	addrA, addrB := freeAddr(t), freeAddr(t)
	start := func(data, addr string) *proc {
		return serveAt(t, bin, data, "", addr, "--public-url", "http://"+addr)
	}
	pa, pb := start(dataA, addrA), start(dataB, addrB)
	baseA, baseB := "http://"+addrA, "http://"+addrB
	defer func() { pa.kill(t); pb.kill(t) }()

	var tok struct {
		Token string `json:"token"`
	}
	mustToken := func(data, name, scopes string) string {
		if err := json.Unmarshal(run(t, bin, "agent", "create", "--data", data, "--name", name, "--scope", scopes, "--json"), &tok); err != nil {
			t.Fatal(err)
		}
		return tok.Token
	}
	run(t, bin, "peer", "add", "b", baseB, "--token", mustToken(dataB, "server-a", "read,post"), "--forward-asks", "--data", dataA, "--json")
	run(t, bin, "peer", "add", "a", baseA, "--token", mustToken(dataA, "server-b", "read"), "--data", dataB, "--json")
	askers := createAgents(t, bin, dataA, "fed-asker", 4)
	answerer := mustToken(dataB, "answerer", "read,post")

	var asked sync.Map
	records := newLedger()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 35))
	for cycle := range cycles {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w, token := range askers {
			wg.Add(1)
			go func() { defer wg.Done(); fedAsk(baseA, token, cycle, w, &asked, stop) }()
		}
		wg.Add(2)
		go func() { defer wg.Done(); fedAnswer(baseB, answerer, stop) }()
		go func() { defer wg.Done(); importRecords(bin, dataB, dir, records, stop) }()
		time.Sleep(time.Duration(500+rng.IntN(1500)) * time.Millisecond) // the random moment is the point
		if cycle%2 == 0 {
			pa.kill(t)
			time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond)
			pa = start(dataA, addrA)
		} else {
			pb.kill(t)
			time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond)
			pb = start(dataB, addrB)
		}
		time.Sleep(time.Duration(rng.IntN(1000)) * time.Millisecond)
		close(stop)
		wg.Wait()
		t.Logf("cycle %d: killed %s under load", cycle+1, map[bool]string{true: "A", false: "B"}[cycle%2 == 0])
	}

	// Everything settles: forwards retried (with backoff), every question
	// answered on B, the answers back on A, B's records followed.
	answerC := client.New(baseB, client.WithToken(answerer))
	wantRecords := fedRecords(t, baseB)
	settling := time.Now()
	deadline := settling.Add(2 * time.Minute) // a guard: backoff after the kills reaches tens of seconds
	var onA, onB map[string][]api.Discussion
	var settledIn time.Duration
	for {
		fedAnswerOpen(answerC)
		onA, onB = fedDiscussions(t, client.New(baseA)), fedDiscussions(t, client.New(baseB))
		settled := len(onB) == len(onA) && fedPeer(t, bin, dataA, "b").Documents == wantRecords
		for _, ds := range onA {
			for _, d := range ds {
				settled = settled && d.Status == "answered"
			}
		}
		if settled {
			settledIn = time.Since(settling)
			break
		}
		if time.Now().After(deadline) {
			for title, ds := range onA {
				if ds[0].Status != "answered" {
					t.Logf("open on A: %q %s; on B: %+v", title, ds[0].ID, onB[title])
				}
			}
			t.Logf("A's log:\n%s", pa.logs.String())
			t.Fatalf("not settled: %d questions on A, %d on B, A follows %d of B's %d records (%+v)",
				len(onA), len(onB), fedPeer(t, bin, dataA, "b").Documents, wantRecords, fedPeer(t, bin, dataA, "b"))
		}
		time.Sleep(500 * time.Millisecond) // polling other processes
	}
	// Nothing duplicated, nothing lost.
	ca := client.New(baseA)
	for title, ds := range onA {
		if len(ds) != 1 || len(onB[title]) != 1 {
			t.Errorf("%q: %d discussions on A, %d on B", title, len(ds), len(onB[title]))
			continue
		}
		d, err := ca.Discussion(context.Background(), ds[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Replies) != 1 || d.Replies[0].AuthorName != "answerer@b" || d.Replies[0].Body != "answered on B: "+title {
			t.Errorf("%q on A: replies %+v", title, d.Replies)
		}
	}
	n := 0
	asked.Range(func(id, token any) bool {
		n++
		c := client.New(baseA, client.WithToken(token.(string)))
		tk, err := c.GetTask(context.Background(), id.(string), nil)
		if err != nil || tk.Status.State != a2a.TaskStateCompleted {
			t.Errorf("acknowledged task %s: %v %+v", id, err, tk.Status)
		}
		return true
	})
	if got := fedPeer(t, bin, dataB, "a").Documents; got != 0 {
		t.Errorf("B follows %d documents of A; A's questions are B's own copies' origin", got)
	}
	mustCheck(t, bin, dataA, "")
	mustCheck(t, bin, dataB, "")
	t.Logf("%d cycles: %d questions asked on A (%d acknowledged), each once on B and answered back once; A follows B's %d records (settled %s after the last kill); kfa check passes on both",
		cycles, len(onA), n, wantRecords, settledIn.Round(time.Second))
}
