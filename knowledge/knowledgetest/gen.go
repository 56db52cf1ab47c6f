// Package knowledgetest generates realistic knowledge records for tests
// and benchmarks: the 100,000-record import and the search benchmarks.
// Output is deterministic for a seed, so fixtures can be cached.
package knowledgetest

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/kfa-project/kfa/knowledge"
)

// techWords open the vocabulary, so they are the most frequent words.
var techWords = strings.Fields(`
the server client request response timeout error connection database file process memory disk
network port socket header body query index cache token session user agent task message stream
event log metric trace config build deploy container image pod node cluster service proxy gateway
certificate key secret permission denied refused reset closed broken pipe deadlock lock leak
goroutine thread channel context cancel retry backoff limit quota rate burst queue worker batch
commit rollback transaction replica primary shard partition migration schema table column row
json yaml protobuf grpc http https tls dns tcp udp ipv6 route ingress egress firewall nginx
kubernetes docker systemd linux macos windows postgres sqlite redis kafka bbolt git curl python
golang rust java node upstream downstream latency throughput p99 histogram counter gauge alert
probe liveness readiness startup shutdown signal sigterm sigkill crash panic restart loop backlog
buffer flush sync fsync page freelist compaction vacuum bloat autovacuum checkpoint wal journal
snapshot backup restore replay feed sequence cursor pagination offset filter sort search rank
score snippet highlight analyzer stem token boost field keyword exact match prefix fuzzy phrase
bearer scope credential rotate revoke expire refresh oauth jwt cookie cors origin preflight
header etag cache-control no-store max-age conditional retry-after throttle spike saturation
cpu oom killer cgroup swap inode quota ulimit descriptor epoll accept listen bind address
registry pull push tag digest layer multistage distroless alpine scratch glibc musl static
module vendor replace proxy checksum sumdb private tidy generics interface pointer nil slice map
`)

// vocabSize is the number of distinct words. Real text has a long tail:
// most words are rare, and a query usually holds some of them.
const vocabSize = 40_000

// vocabulary is drawn from with a Zipf distribution (techWords first,
// then made-up words), so a few words are common and most are rare.
var vocabulary = buildVocabulary()

func buildVocabulary() []string {
	syl := strings.Fields("ka lo mi ne ru sa te vo zi pra kle sto gru fen dal mor tis bax quin")
	seen := map[string]bool{}
	v := append([]string(nil), techWords...)
	for _, w := range v {
		seen[w] = true
	}
	r := rand.New(rand.NewPCG(42, 42))
	for len(v) < vocabSize {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			v = append(v, w)
		}
	}
	return v
}

// rareWords name no record, for queries that must miss.
var rareWords = []string{"quasar", "nebula", "tundra", "fjord", "savanna", "glacier", "lagoon", "mesa"}

var (
	kinds    = []string{"fix", "howto", "reference"}
	products = []string{"go", "http", "a2a", "bbolt", "postgresql", "docker", "kubernetes", "nginx", "git",
		"linux", "tls", "systemd", "prometheus", "curl", "sqlite", "redis", "grpc", "python", "kafka", "rust"}
	envs = []string{"any", "linux", "kubernetes", "macos", "windows"}
)

// Gen makes records. It is not safe for concurrent use.
type Gen struct {
	rnd  *rand.Rand
	zipf *rand.Zipf
}

// New returns a generator for seed.
func New(seed uint64) *Gen {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return &Gen{rnd: r, zipf: rand.NewZipf(r, 1.07, 2, uint64(len(vocabulary)-1))}
}

func (g *Gen) words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = vocabulary[g.zipf.Uint64()]
	}
	return strings.Join(w, " ")
}

// Record returns the i-th record. Each title holds a unique marker word,
// Marker(i), so a test can find any record.
func (g *Gen) Record(i int) knowledge.Record {
	title := g.words(4+g.rnd.IntN(6)) + " " + Marker(i)
	var body strings.Builder
	for s := range 6 + g.rnd.IntN(10) {
		if s > 0 {
			body.WriteString(". ")
		}
		body.WriteString(g.words(8 + g.rnd.IntN(12)))
	}
	body.WriteString(".")
	tags := make([]string, 2+g.rnd.IntN(3))
	for j := range tags {
		tags[j] = vocabulary[g.zipf.Uint64()]
	}
	return knowledge.Record{
		ID:          fmt.Sprintf("gen-%06d", i),
		Kind:        kinds[g.rnd.IntN(len(kinds))],
		Product:     products[g.rnd.IntN(len(products))],
		Environment: envs[g.rnd.IntN(len(envs))],
		Title:       title,
		Body:        body.String(),
		Tags:        tags,
		URL:         fmt.Sprintf("https://kb.example.com/articles/%d", i),
	}
}

// Question returns a question an agent might ask: a few of the records'
// words and a question mark.
func (g *Gen) Question() string { return g.words(5+g.rnd.IntN(8)) + "?" }

// Details returns a paragraph of the records' words: a question's details
// or a reply.
func (g *Gen) Details() string { return g.words(20+g.rnd.IntN(40)) + "." }

// Marker is the unique word in record i's title.
func Marker(i int) string { return fmt.Sprintf("marker%06d", i) }

// Query returns a search an agent might send: a few words drawn like the
// records' words, and now and then a word no record holds.
func (g *Gen) Query() string {
	q := g.words(2 + g.rnd.IntN(4))
	if g.rnd.IntN(10) == 0 {
		q += " " + rareWords[g.rnd.IntN(len(rareWords))]
	}
	return q
}

// WriteJSONL writes records 0..n-1 as import lines; badLine, when
// positive, replaces that line (1-based) with a malformed one.
func WriteJSONL(w io.Writer, seed uint64, n, badLine int) error {
	g := New(seed)
	enc := json.NewEncoder(w)
	for i := range n {
		if i+1 == badLine {
			if _, err := io.WriteString(w, `{"id":"malformed","kind":"fix","title":"no body and a broken end"`+"\n"); err != nil {
				return err
			}
			continue
		}
		if err := enc.Encode(g.Record(i)); err != nil {
			return err
		}
	}
	return nil
}

// CommonQuery returns a worst-case search: only words from the most
// frequent few, each in a large share of the records.
func (g *Gen) CommonQuery() string {
	w := make([]string, 2+g.rnd.IntN(3))
	for i := range w {
		w[i] = techWords[g.rnd.IntN(20)]
	}
	return strings.Join(w, " ")
}
