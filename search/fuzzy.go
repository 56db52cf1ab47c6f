package search

import (
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	index "github.com/blevesearch/bleve_index_api"

	"github.com/kfa-project/kfa/knowledge"
)

// minFuzzyLen is the shortest term that is corrected: many words are one
// edit away from a short one, so a short unknown term is more likely a
// word the index does not know than a misspelling.
const minFuzzyLen = 4

// minLoneFuzzyLen is the shortest term corrected in a query none of whose
// terms is known (see corrections).
const minLoneFuzzyLen = 5

// maxFuzzyLen is the longest term that is corrected, in characters: a
// longer one is an identifier, a hash or noise rather than a misspelt
// word, and the work of correcting a term grows with its length (an
// automaton and a lookup per transposition, each as long as the term).
const maxFuzzyLen = 32

// corrections replaces each term of ts that no document holds (unknown)
// by the indexed term one edit away (an insertion, a deletion, a
// substitution or two neighbouring letters swapped) that the most
// documents hold. It returns the new terms and what it replaced; none
// when no term has such a neighbour.
//
// A query none of whose terms is known has nothing spelt right to anchor
// it, and ordinary words one edit from an indexed word are more likely
// about something else than misspelt ("bread" is not "read", "butter" not
// "better", "purl" not "curl"). Such a query is corrected only when every
// term is, each by a lone correction: a term of five letters or more, a
// letter left out, doubled or added, or two neighbouring letters swapped,
// never a letter replaced by another nor a digit added or left out, and
// its first letter kept. That reads "cerbot" as "certbot" and "dokcer" as
// "docker", and leaves nonsense ("zxqvj") and other subjects ("knitting
// purl yarn") an honest miss.
func corrections(ctx context.Context, r index.IndexReader, ts []string, unknown map[string]bool) ([]string, []knowledge.Correction, error) {
	fr, ok := r.(index.IndexReaderFuzzy)
	if !ok {
		return ts, nil, nil
	}
	lone := len(unknown) == len(ts)
	out := slices.Clone(ts)
	var corr []knowledge.Correction
	for i, t := range ts {
		if n := utf8.RuneCountInString(t); !unknown[t] || n < minFuzzyLen || n > maxFuzzyLen {
			continue
		}
		if lone && utf8.RuneCountInString(t) < minLoneFuzzyLen {
			return ts, nil, nil
		}
		best, bestDF := "", uint64(0)
		consider := func(c string) error {
			if c == t || slices.Contains(out, c) || lone && !loneEdit(t, c) {
				return nil
			}
			df, err := docFreq(ctx, r, c)
			if err != nil {
				return err
			}
			if df > bestDF || df == bestDF && df > 0 && c < best {
				best, bestDF = c, df
			}
			return nil
		}
		for _, f := range textFields {
			d, err := fr.FieldDictFuzzy(f.name, t, 1, "")
			if err != nil {
				return nil, nil, err
			}
			err = eachTerm(d, consider)
			if cerr := d.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, nil, err
			}
		}
		for _, c := range transpositions(t) {
			if err := consider(c); err != nil {
				return nil, nil, err
			}
		}
		if bestDF > 0 {
			out[i] = best
			corr = append(corr, knowledge.Correction{From: t, To: best})
		} else if lone {
			// Every term of such a query must read as a misspelling.
			return ts, nil, nil
		}
	}
	return out, corr, nil
}

// loneEdit reports whether c, one edit from t, is a correction a query
// with no known term takes (see corrections): the same first letter, and
// a letter (not a digit: "quokka3" is not "quokka13") added, left out,
// or swapped with its neighbour.
func loneEdit(t, c string) bool {
	rt, rc := []rune(t), []rune(c)
	if len(rt) == 0 || len(rc) == 0 || rt[0] != rc[0] {
		return false
	}
	if len(rt) != len(rc) {
		// An insertion or a deletion: the letter the longer has at the
		// first place they differ.
		long, short := rt, rc
		if len(rc) > len(rt) {
			long, short = rc, rt
		}
		i := 0
		for i < len(short) && long[i] == short[i] {
			i++
		}
		return unicode.IsLetter(long[i])
	}
	for i := range rt {
		if rt[i] != rc[i] {
			// Two neighbouring letters swapped, the rest alike: checked in
			// place, in one pass (listing t's transpositions here made
			// each candidate cost the square of the term's length).
			return i+1 < len(rt) && unicode.IsLetter(rt[i]) && unicode.IsLetter(rt[i+1]) &&
				rc[i] == rt[i+1] && rc[i+1] == rt[i] && slices.Equal(rt[i+2:], rc[i+2:])
		}
	}
	return false
}

// transpositions are t with two neighbouring letters swapped, which a
// Levenshtein automaton counts as two edits ("tiemout").
func transpositions(t string) []string {
	r := []rune(t)
	var out []string
	for i := 0; i+1 < len(r); i++ {
		if r[i] == r[i+1] {
			continue
		}
		s := slices.Clone(r)
		s[i], s[i+1] = s[i+1], s[i]
		out = append(out, string(s))
	}
	return out
}

// eachTerm calls fn with each term of d.
func eachTerm(d index.FieldDict, fn func(string) error) error {
	for {
		e, err := d.Next()
		if err != nil || e == nil {
			return err
		}
		if err := fn(e.Term); err != nil {
			return err
		}
	}
}

// spelt turns corrections of analysed terms into words: the word of the
// query text that was corrected, and the word of a hit's title or body
// that it was read as ("gatway" and "gateway", where the terms are
// "gatwai" and "gatewai"). It also returns the query text with each
// corrected word replaced by the word it was read as: the query that was
// answered ("renew certbot" for "renew cerbot"). The caller holds mu for
// reading.
func (x *Index) spelt(text string, corr []knowledge.Correction, hits []candidate) ([]knowledge.Correction, string) {
	typed := map[string]string{}
	an := x.an.m.AnalyzerNamed(textAnalyzer)
	toks := an.Analyze([]byte(text))
	for _, tok := range toks {
		if _, ok := typed[string(tok.Term)]; !ok && tok.End <= len(text) {
			typed[string(tok.Term)] = strings.ToLower(text[tok.Start:tok.End])
		}
	}
	out := make([]knowledge.Correction, len(corr))
	readAs := make(map[string]string, len(corr)) // corrected term -> the word it was read as
	for i, c := range corr {
		out[i] = c
		if w, ok := typed[c.From]; ok {
			out[i].From = w
		}
		if w := x.wordOf(c.To, hits); w != "" {
			out[i].To = w
		}
		readAs[c.From] = out[i].To
	}
	var b strings.Builder
	at := 0
	for _, tok := range toks {
		w, ok := readAs[string(tok.Term)]
		if !ok || tok.Start < at || tok.End > len(text) {
			continue
		}
		b.WriteString(text[at:tok.Start])
		b.WriteString(w)
		at = tok.End
	}
	b.WriteString(text[at:])
	return out, b.String()
}

// wordOf is the first word of a hit's stored title or body that was
// indexed as term, or "".
func (x *Index) wordOf(term string, hits []candidate) string {
	for _, c := range hits {
		for _, f := range []string{fTitle, fBody} {
			locs := c.dm.Locations[f][term]
			if len(locs) == 0 {
				continue
			}
			doc := c.doc
			if !c.disc {
				var err error
				if doc, err = load(x.rec, c.dm.ID); err != nil {
					continue
				}
			}
			v, l := doc.fields[f], locs[0]
			if l.Start < l.End && int(l.End) <= len(v) {
				return strings.ToLower(v[l.Start:l.End])
			}
		}
	}
	return ""
}
