package search

import (
	"context"
	"math/rand"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// countingReader counts the index lookups a search makes: term
// statistics and postings, and fuzzy dictionaries (an automaton each).
type countingReader struct {
	index.IndexReader
	terms, fuzzy int
}

func (c *countingReader) TermFieldReader(ctx context.Context, term []byte, field string, freq, norm, vectors bool) (index.TermFieldReader, error) {
	c.terms++
	return c.IndexReader.TermFieldReader(ctx, term, field, freq, norm, vectors)
}

func (c *countingReader) FieldDictFuzzy(field, term string, fuzziness int, prefix string) (index.FieldDict, error) {
	c.fuzzy++
	return c.IndexReader.(index.IndexReaderFuzzy).FieldDictFuzzy(field, term, fuzziness, prefix)
}

func (c *countingReader) FieldDictFuzzyAutomaton(field, term string, fuzziness int, prefix string) (index.FieldDict, index.FuzzyAutomaton, error) {
	c.fuzzy++
	return c.IndexReader.(index.IndexReaderFuzzy).FieldDictFuzzyAutomaton(field, term, fuzziness, prefix)
}

// The spelling step must see the counting reader as the index's own.
var _ index.IndexReaderFuzzy = (*countingReader)(nil)

// hostileQueries are the queries that cost the most per character: as
// many unknown terms as a query keeps, each as long as is corrected; one
// term as long as a query; terms past the limit; query syntax bleve would
// read as wildcards, fuzzy or regexp queries if it parsed the text.
func hostileQueries() map[string]string {
	rnd := rand.New(rand.NewSource(1))
	// Consonants other than s: the stemmer leaves such words whole.
	const letters = "bcdfghjklmnpqrtvwxz"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[rnd.Intn(len(letters))]
		}
		return string(b)
	}
	words := func(count, n int) string {
		var ws []string
		for range count {
			ws = append(ws, word(n))
		}
		return strings.Join(ws, " ")
	}
	return map[string]string{
		"one term of 1000 letters":      word(1000),
		"32 unknown terms of 32":        words(32, 32),
		"190 unknown terms of 5":        words(190, 5),
		"query syntax":                  strings.Repeat(`a* b? ~c^2 /d.*/ +e -f "g h" i:j `, 30),
		"one term, repeated":            strings.Repeat("certbot ", 125),
		"terms just past the corrected": words(29, maxFuzzyLen+1),
	}
}

// TestHostileQueriesBounded: whatever the text, a search keeps at most
// maxTerms terms, builds only term queries from them (no query syntax
// reaches bleve), and its spelling step makes at most one fuzzy automaton
// per field and one lookup per transposition for each term it may
// correct: work bounded by maxTerms × maxFuzzyLen, never by the text's
// length (a 1,000-letter term cost six seconds of CPU before).
func TestHostileQueriesBounded(t *testing.T) {
	f := setup(t, samples(t))
	x := f.idx
	maxFuzzy := maxTerms * len(textFields)
	maxLookups := maxTerms * (maxFuzzyLen - 1) * len(textFields) // transpositions
	for name, q := range hostileQueries() {
		t.Run(name, func(t *testing.T) {
			x.mu.RLock()
			defer x.mu.RUnlock()
			ts := x.an.terms(q)
			if len(ts) > maxTerms {
				t.Fatalf("%d terms kept, want at most %d", len(ts), maxTerms)
			}
			checkTermsOnly(t, textQuery(ts, map[string]bool{ts[0]: true}))
			r, err := reader(x.rec)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			st, err := stats(context.Background(), r, ts)
			if err != nil {
				t.Fatal(err)
			}
			cr := &countingReader{IndexReader: r}
			if _, _, err := corrections(context.Background(), cr, ts, st.unknown); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(name, "unknown terms") && cr.fuzzy == 0 {
				t.Fatal("the spelling step did not run: the test measures nothing")
			}
			if cr.fuzzy > maxFuzzy || cr.terms > maxLookups {
				t.Fatalf("spelling made %d automata and %d lookups, want at most %d and %d", cr.fuzzy, cr.terms, maxFuzzy, maxLookups)
			}
			if strings.HasPrefix(name, "one term of") || strings.HasPrefix(name, "terms just past") {
				if cr.fuzzy+cr.terms != 0 {
					t.Fatalf("terms longer than %d were corrected: %d automata, %d lookups", maxFuzzyLen, cr.fuzzy, cr.terms)
				}
			}
		})
	}
}

// checkTermsOnly fails t unless every leaf of q is a term query.
func checkTermsOnly(t *testing.T, q query.Query) {
	t.Helper()
	switch q := q.(type) {
	case *query.TermQuery:
	case *query.DisjunctionQuery:
		for _, c := range q.Disjuncts {
			checkTermsOnly(t, c)
		}
	case *query.ConjunctionQuery:
		for _, c := range q.Conjuncts {
			checkTermsOnly(t, c)
		}
	default:
		t.Fatalf("a %T in the query", q)
	}
}

// TestLoneEditIsLinear: checking one candidate allocates a fixed amount
// whatever the term's length (it listed every transposition of the term,
// for each of its transpositions: the cube of the length).
func TestLoneEditIsLinear(t *testing.T) {
	term := strings.Repeat("ab", 500)
	swapped := "aab" + term[3:] // the second and third letters swapped
	if !loneEdit(term, swapped) {
		t.Fatal("two neighbouring letters swapped is a lone edit")
	}
	allocs := testing.AllocsPerRun(5, func() { loneEdit(term, swapped) })
	if allocs > 4 {
		t.Fatalf("loneEdit allocates %.0f times for a 1000-letter term, want at most 4", allocs)
	}
}

// TestBrowseCursorBounded: a record listing's cursor longer than any it
// hands out is refused before it is decoded (it was decoded and parsed as
// JSON whatever its length, up to the size of a request line).
func TestBrowseCursorBounded(t *testing.T) {
	long := encodeCursor([]string{strings.Repeat("9", 4000), strings.Repeat("r", 4000)})
	if _, err := decodeCursor(long); err == nil {
		t.Fatalf("a cursor of %d characters was decoded", len(long))
	}
	ok := encodeCursor([]string{"1767225600000", strings.Repeat("r", 128)})
	if len(ok) > maxCursorLen {
		t.Fatalf("a cursor the listing hands out is %d characters, over %d", len(ok), maxCursorLen)
	}
	if got, err := decodeCursor(ok); err != nil || len(got) != 2 {
		t.Fatalf("decode %q: %v %v", ok, got, err)
	}
}
