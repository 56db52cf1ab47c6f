package search

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	index "github.com/blevesearch/bleve_index_api"

	"github.com/kfa-project/kfa/knowledge"
)

// minFuzzyLen is the shortest term that is corrected: many words are one
// edit away from a short one, so a short unknown term is more likely a
// word the index does not know than a misspelling.
const minFuzzyLen = 4

// corrections replaces each term of ts that no document holds (unknown)
// by the indexed term one edit away (an insertion, a deletion, a
// substitution or two neighbouring letters swapped) that the most
// documents hold. It returns the new terms and what it replaced; none
// when no term has such a neighbour.
//
// A query none of whose terms is known is left alone: with nothing
// spelt right to anchor it, words one edit from some indexed word
// ("purl", "yarn") are more likely about something else than
// misspelt.
func corrections(ctx context.Context, r index.IndexReader, ts []string, unknown map[string]bool) ([]string, []knowledge.Correction, error) {
	fr, ok := r.(index.IndexReaderFuzzy)
	if !ok || len(unknown) == len(ts) {
		return ts, nil, nil
	}
	out := slices.Clone(ts)
	var corr []knowledge.Correction
	for i, t := range ts {
		if !unknown[t] || utf8.RuneCountInString(t) < minFuzzyLen {
			continue
		}
		best, bestDF := "", uint64(0)
		consider := func(c string) error {
			if c == t || slices.Contains(out, c) {
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
		}
	}
	return out, corr, nil
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
// "gatwai" and "gatewai"). The caller holds mu for reading.
func (x *Index) spelt(text string, corr []knowledge.Correction, hits []candidate) []knowledge.Correction {
	typed := map[string]string{}
	an := x.an.m.AnalyzerNamed(textAnalyzer)
	for _, tok := range an.Analyze([]byte(text)) {
		if _, ok := typed[string(tok.Term)]; !ok && tok.End <= len(text) {
			typed[string(tok.Term)] = strings.ToLower(text[tok.Start:tok.End])
		}
	}
	out := make([]knowledge.Correction, len(corr))
	for i, c := range corr {
		out[i] = c
		if w, ok := typed[c.From]; ok {
			out[i].From = w
		}
		if w := x.wordOf(c.To, hits); w != "" {
			out[i].To = w
		}
	}
	return out
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
