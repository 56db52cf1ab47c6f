package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// How soon search on one process finds a write made through another, two
// kfa serve on one PostgreSQL database (issue 24: within a second). Each
// process's search index follows the change log; this measures that path
// end to end, from the write's answer to the first search on the other
// process that lists what was written.

// maxFollow is issue 24's bound on the delay.
const maxFollow = time.Second

// followGiveUp ends the wait for one write: it counts as missed.
const followGiveUp = 10 * time.Second

// FollowDelay is the delay distribution over many writes.
type FollowDelay struct {
	// Kinds are the delays of each kind of write; All is every write's.
	Kinds []FollowKind `json:"kinds"`
	All   Latency      `json:"all"`
	// Missed counts the writes not found within followGiveUp, and Errors
	// the writes or searches that failed (FirstError says how).
	Missed     int    `json:"missed"`
	Errors     int    `json:"errors"`
	FirstError string `json:"firstError,omitempty"`
}

// FollowKind is the delays of one kind of write.
type FollowKind struct {
	Name string `json:"name"`
	Latency
}

// followKinds name the writes, in the order a repetition makes them.
var followKinds = []string{
	"ask (an open discussion)",
	"reply to an open discussion",
	"reply to an answered discussion",
	"record import",
}

// Met says whether every write was found within maxFollow.
func (f FollowDelay) Met() bool {
	return f.All.N > 0 && f.Missed == 0 && f.Errors == 0 && f.All.MaxMs <= ms(maxFollow)
}

// followDelay makes reps repetitions of an ask, a reply to it, a second
// reply and a record import, one at a time, each through one of t's
// processes (alternating), and times from each write's answer to the
// first search on the other process that finds it. Every write carries
// words no other holds, so a search finds it only once it is indexed.
func (b *bench) followDelay(ctx context.Context, t *storeTarget, reps int) FollowDelay {
	var f FollowDelay
	if len(t.procs) < 2 || len(t.agents) < 2 {
		f.FirstError = "needs two processes and two agents"
		return f
	}
	hc := httpClient(4)
	defer hc.CloseIdleConnections()
	w := &worker{rng: rand.New(rand.NewPCG(9, 10))}
	words := newWordMaker(rand.New(rand.NewPCG(11, uint64(time.Now().UnixNano()))))
	lat := make([][]time.Duration, len(followKinds))
	fail := func(err error) {
		f.Errors++
		if f.FirstError == "" {
			f.FirstError = truncate(err.Error(), 300)
		}
	}
	// found waits until a search for query on p lists id, and returns how
	// long after since that was.
	found := func(p *kfaProc, query, id string, since time.Time) (time.Duration, bool, error) {
		body := searchQuery(query)
		want := []byte(`"` + id + `"`)
		for {
			if err := do(ctx, hc, w, call{method: http.MethodPost, url: p.url + "/a2a/v1/message:send", body: body, a2a: true}); err != nil {
				return 0, false, err
			}
			if bytes.Contains(w.buf.Bytes(), want) {
				return time.Since(since), true, nil
			}
			if time.Since(since) > followGiveUp || ctx.Err() != nil {
				return 0, false, ctx.Err()
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	measure := func(kind int, p *kfaProc, query, id string, since time.Time) {
		d, ok, err := found(p, query, id, since)
		switch {
		case err != nil:
			fail(fmt.Errorf("%s: search: %w", followKinds[kind], err))
		case !ok:
			f.Missed++
		default:
			lat[kind] = append(lat[kind], d)
		}
	}
	dir := filepath.Join(b.dir, "follow")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fail(err)
		return f
	}
	for r := range reps {
		if ctx.Err() != nil {
			break
		}
		writer, searcher := t.procs[r%2], t.procs[1-r%2]
		asker, replier := t.agents[r%len(t.agents)], t.agents[(r+1)%len(t.agents)]

		question := fmt.Sprintf("How do I %s the %s %s?", words.next(), words.next(), words.next())
		if err := do(ctx, hc, w, call{method: http.MethodPost, url: writer.url + "/a2a/v1/message:send", token: asker.token,
			body: askQuestion(fmt.Sprintf("follow-%d", r), question), a2a: true}); err != nil {
			fail(fmt.Errorf("ask: %w", err))
			continue
		}
		disc := jsonString(w.buf.Bytes(), "discussionId", true)
		measure(0, searcher, question, disc, time.Now())

		for kind := 1; kind <= 2; kind++ {
			a, c := words.next(), words.next()
			reply := fmt.Sprintf(`{"body":"Run the %s on the %s first."}`, a, c)
			if err := do(ctx, hc, w, call{method: http.MethodPost, url: writer.url + "/api/v1/discussions/" + disc + "/replies",
				token: replier.token, body: []byte(reply), want: http.StatusCreated}); err != nil {
				fail(fmt.Errorf("%s: %w", followKinds[kind], err))
				continue
			}
			measure(kind, searcher, a+" "+c, disc, time.Now())
		}

		id := fmt.Sprintf("bench-follow-%d-%d", os.Getpid(), r)
		a, c := words.next(), words.next()
		file := filepath.Join(dir, id+".jsonl")
		rec := fmt.Sprintf(`{"id":%q,"kind":"fix","title":"Tune the %s %s","body":"Imported through one process, searched on the other."}`+"\n", id, a, c)
		if err := os.WriteFile(file, []byte(rec), 0o600); err != nil {
			fail(err)
			continue
		}
		out, err := execCommand(ctx, writer.bin, "records", "import", file, "--data", writer.dataDir).CombinedOutput()
		if err != nil {
			fail(fmt.Errorf("record import: %w: %s", err, truncate(string(bytes.TrimSpace(out)), 200)))
			continue
		}
		measure(3, searcher, a+" "+c, id, time.Now())
	}
	var all []time.Duration
	for i, name := range followKinds {
		all = append(all, lat[i]...)
		f.Kinds = append(f.Kinds, FollowKind{Name: name, Latency: summarize(lat[i])})
	}
	f.All = summarize(all)
	return f
}

// askQuestion is a SendMessage request asking question, and nothing else.
func askQuestion(messageID, question string) []byte {
	return fmt.Appendf(nil, `{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"data":{"action":"ask","question":%q},"mediaType":"application/json"}]},"configuration":{"returnImmediately":true}}`,
		messageID, question)
}

// searchQuery is an anonymous search for query.
func searchQuery(query string) []byte {
	return fmt.Appendf(nil, `{"message":{"messageId":"bench-follow-search","role":"ROLE_USER","parts":[{"data":{"action":"search","query":%q,"limit":5},"mediaType":"application/json"}]}}`,
		query)
}

// wordMaker makes words of letters that no English word, and no other
// word of the run, is one edit away from: search's spelling correction
// then never reads one for another.
type wordMaker struct {
	rng  *rand.Rand
	seen []string
}

func newWordMaker(rng *rand.Rand) *wordMaker { return &wordMaker{rng: rng} }

// next is a new word: "zq" (no English word starts so), then eight
// letters, consonants and vowels alternating so that the analyzer reads an
// ordinary word, ending in a consonant no stemmer strips; it differs from
// every earlier word in at least three places (one edit between words of
// one length changes one place, or two for a swap).
func (m *wordMaker) next() string {
	const cons, vows = "bdfgklmnprtvz", "aeiou"
	for {
		w := []byte("zq")
		for i := range 8 {
			if i%2 == 0 {
				w = append(w, vows[m.rng.IntN(len(vows))])
			} else {
				w = append(w, cons[m.rng.IntN(len(cons))])
			}
		}
		w = append(w, 'k')
		if !slices.ContainsFunc(m.seen, func(s string) bool { return differences(s, string(w)) < 3 }) {
			m.seen = append(m.seen, string(w))
			return string(w)
		}
	}
}

// differences counts the places where a and b, of one length, differ.
func differences(a, b string) int {
	n := 0
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			n++
		}
	}
	return n + max(len(a), len(b)) - min(len(a), len(b))
}
