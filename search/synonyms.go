package search

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/kfa-project/kfa/knowledge"
)

// SynonymsFile is the name of the synonyms file in the data directory.
const SynonymsFile = "synonyms.txt"

// Bounds on a synonyms file.
const (
	maxSynonymsBytes = 1 << 20
	maxSynonymLine   = 64 << 10
)

// Synonyms are the operator's synonym groups: words that mean the same,
// such as postgres, postgresql and pg. Each word is analysed as text is
// (lower case, stemmed), and folded into its group's first word when
// records, discussions and queries are analysed, so a query with any word
// of a group matches a text with any other, and scores as one term.
//
// Because the folding happens when documents are indexed, the index
// records which synonyms it was built with (Digest), and is rebuilt when
// they change. The nil *Synonyms is the empty set.
type Synonyms struct {
	canon  map[string]string // analysed word -> its group's first analysed word
	groups int
	digest string
}

// Len is the number of groups.
func (s *Synonyms) Len() int {
	if s == nil {
		return 0
	}
	return s.groups
}

// Digest names the synonyms: equal sets have equal digests. "" for none.
func (s *Synonyms) Digest() string {
	if s.Len() == 0 {
		return ""
	}
	return s.digest
}

// SynonymsError is a line of a synonyms file that cannot be used.
type SynonymsError struct {
	File string // "" when read from a reader
	Line int
	Msg  string
}

// Is makes errors.Is(err, knowledge.ErrSynonyms) hold.
func (e *SynonymsError) Is(target error) bool { return target == knowledge.ErrSynonyms }

func (e *SynonymsError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("synonyms line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// LoadSynonyms reads the synonyms file at path. A missing file means no
// synonyms.
func LoadSynonyms(path string) (*Synonyms, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("search: open synonyms: %w", err)
	}
	defer f.Close()
	s, err := ParseSynonyms(io.LimitReader(f, maxSynonymsBytes+1))
	var se *SynonymsError
	if errors.As(err, &se) {
		se.File = path
	}
	return s, err
}

// ParseSynonyms reads synonym groups, one a line, the words separated by
// commas ("postgres, postgresql, pg"). Blank lines and lines starting
// with # are skipped. Each word must be one word once analysed (not a
// stop word, not a phrase), and may be in one group only.
func ParseSynonyms(r io.Reader) (*Synonyms, error) {
	a, err := registry.NewCache().AnalyzerNamed(en.AnalyzerName)
	if err != nil {
		return nil, fmt.Errorf("search: synonyms analyser: %w", err)
	}
	s := &Synonyms{canon: map[string]string{}}
	lineOf := map[string]int{} // analysed word -> the line of its group
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxSynonymLine)
	n, size := 0, 0
	for sc.Scan() {
		n++
		size += len(sc.Bytes()) + 1
		if size > maxSynonymsBytes {
			return nil, &SynonymsError{Line: n, Msg: fmt.Sprintf("the file is larger than %d bytes", maxSynonymsBytes)}
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var group []string
		for w := range strings.SplitSeq(line, ",") {
			w = strings.TrimSpace(w)
			if w == "" {
				continue
			}
			toks := a.Analyze([]byte(w))
			switch {
			case len(toks) == 0:
				return nil, &SynonymsError{Line: n, Msg: fmt.Sprintf("%q is a stop word or punctuation; search ignores it", w)}
			case len(toks) > 1:
				return nil, &SynonymsError{Line: n, Msg: fmt.Sprintf("%q is several words; a synonym is one word", w)}
			}
			t := string(toks[0].Term)
			if slices.Contains(group, t) {
				continue // another spelling of the same analysed word
			}
			if at, ok := lineOf[t]; ok {
				return nil, &SynonymsError{Line: n, Msg: fmt.Sprintf("%q is already in the group on line %d", w, at)}
			}
			group = append(group, t)
		}
		if len(group) < 2 {
			continue // nothing to fold
		}
		for _, t := range group {
			lineOf[t] = n
			if t != group[0] {
				s.canon[t] = group[0]
			}
		}
		s.groups++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &SynonymsError{Line: n + 1, Msg: fmt.Sprintf("line longer than %d bytes", maxSynonymLine)}
		}
		return nil, fmt.Errorf("search: read synonyms: %w", err)
	}
	words := make([]string, 0, len(s.canon))
	for w, c := range s.canon {
		words = append(words, w+"\x00"+c)
	}
	slices.Sort(words)
	sum := sha256.Sum256([]byte(strings.Join(words, "\n")))
	s.digest = hex.EncodeToString(sum[:8])
	return s, nil
}

// filterConfig is the token filter's definition, as the index mapping
// stores it.
func (s *Synonyms) filterConfig() map[string]any {
	m := make(map[string]any, len(s.canon))
	for w, c := range s.canon {
		m[w] = c
	}
	return map[string]any{"type": synonymType, "canon": m}
}

// synonymTokens folds each token that is a synonym into its group's
// first word.
type synonymTokens struct{ canon map[string]string }

func (f synonymTokens) Filter(in analysis.TokenStream) analysis.TokenStream {
	for _, tok := range in {
		if c, ok := f.canon[string(tok.Term)]; ok {
			tok.Term = []byte(c)
		}
	}
	return in
}

func newSynonymTokens(config map[string]any, _ *registry.Cache) (analysis.TokenFilter, error) {
	raw, _ := config["canon"].(map[string]any)
	canon := make(map[string]string, len(raw))
	for w, c := range raw {
		s, ok := c.(string)
		if !ok {
			return nil, fmt.Errorf("synonym %q: not a string", w)
		}
		canon[w] = s
	}
	return synonymTokens{canon: canon}, nil
}

// The filter type is registered once, as bleve's own are: an index made
// with synonyms names it in its stored mapping.
func init() {
	if err := registry.RegisterTokenFilter(synonymType, newSynonymTokens); err != nil {
		panic(err)
	}
}
