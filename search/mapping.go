package search

import (
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/single"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
)

// schemaVersion names the mapping below. An index built by another version
// is rebuilt on open, so changing the mapping or the analysers only needs
// a new value here.
const schemaVersion = "kfa-search-6"

// Field names. Records and discussions share one index, so that one
// query ranks both by the same term statistics; the text fields and the
// filters are common, the rest belongs to one kind of document.
const (
	fTitle = "title" // a record's title; a discussion's question
	// fBody is a record's body; a discussion's details and replies: as
	// the plain text a reader of the page reads (markdown.Text), so that
	// neither matches nor snippets hold Markdown's syntax.
	fBody    = "body"
	fTags    = "tags"
	fKind    = "kind"
	fProduct = "product"
	fEnv     = "environment"
	fURL     = "url"
	fUpdated = "updated"
	// fSource marks records ("record"): what a browse lists. fUpdatedMS
	// is a record's updatedAt in Unix ms, what a browse sorts by.
	fSource    = "source"
	fUpdatedMS = "updated_ms"
)

// Fields of discussion documents only, stored and not searched.
const (
	fStatus   = "status"   // open or answered
	fReplies  = "replies"  // reply count, to notice new replies
	fCreated  = "created"  // RFC 3339
	fAnswered = "answered" // RFC 3339; "" while open
	fAnswer   = "answer"   // the first qualifying reply, as plain text: the snippet
	fDetails  = "details"  // the question's details, a record's body, as written (research)
	fThread   = "thread"   // the indexed replies as JSON (research)
	fAccepted = "accepted" // the accepted reply's id; "" for none
	// fSignals is a record's, or a discussion's answer's, signals and
	// author (signalsDoc, as JSON), on both kinds of document.
	fSignals = "signals"
)

// Analysers: text is English (as bleve's "en": possessives removed, lower
// case, stop words removed, Porter stemming) followed, when the operator
// defined synonyms, by the filter that folds each synonym into its
// group's first word. keywordAnalyzer indexes a whole value as one
// lower-cased term, so the filters match exactly, ignoring case.
const (
	textAnalyzer    = "kfa_text"
	keywordAnalyzer = "kfa_keyword"
	synonymFilter   = "kfa_synonym_groups" // the filter of one index, of type synonymType
	synonymType     = "kfa_synonyms"
)

// recordDoc is what the index holds for a record.
type recordDoc struct {
	Title       string   `json:"title"`
	Body        string   `json:"body"`
	Details     string   `json:"details"`
	Tags        []string `json:"tags"`
	Kind        string   `json:"kind"`
	Product     string   `json:"product"`
	Environment string   `json:"environment"`
	URL         string   `json:"url"`
	Updated     string   `json:"updated"`
	Source      string   `json:"source"`
	UpdatedMS   float64  `json:"updated_ms"`
	Signals     string   `json:"signals"`
}

// discussionDoc is what the index holds for a discussion.
type discussionDoc struct {
	Title       string `json:"title"`
	Body        string `json:"body"`
	Kind        string `json:"kind"`
	Product     string `json:"product"`
	Environment string `json:"environment"`
	Status      string `json:"status"`
	Replies     string `json:"replies"`
	Created     string `json:"created"`
	Answered    string `json:"answered"`
	Answer      string `json:"answer"`
	Details     string `json:"details"`
	Thread      string `json:"thread"`
	Accepted    string `json:"accepted"`
	Signals     string `json:"signals"`
}

func text(store bool) *mapping.FieldMapping {
	f := bleve.NewTextFieldMapping()
	f.Analyzer = textAnalyzer
	f.Store = store
	f.IncludeTermVectors = true // which query terms matched (coverage), and where (snippets)
	f.IncludeInAll = false
	f.DocValues = false
	return f
}

func keyword() *mapping.FieldMapping {
	f := bleve.NewTextFieldMapping()
	f.Analyzer = keywordAnalyzer
	f.Store = true
	f.IncludeTermVectors = false
	f.IncludeInAll = false
	f.DocValues = false
	return f
}

// sortable is a number that is indexed for sorting only.
func sortable() *mapping.FieldMapping {
	f := bleve.NewNumericFieldMapping()
	f.Index = true
	f.Store = false
	f.IncludeInAll = false
	f.DocValues = true
	return f
}

func storedOnly() *mapping.FieldMapping {
	f := bleve.NewTextFieldMapping()
	f.Index = false
	f.Store = true
	f.IncludeTermVectors = false
	f.IncludeInAll = false
	f.DocValues = false
	return f
}

// indexMapping is the mapping of the index: title, body and tags are
// analysed text; kind, product and environment keywords (the filters);
// the rest is only stored, to answer from the index. syn folds synonyms
// (nil: none).
func indexMapping(syn *Synonyms) (*mapping.IndexMappingImpl, error) {
	m := bleve.NewIndexMapping()
	m.ScoringModel = index.BM25Scoring
	if err := m.AddCustomAnalyzer(keywordAnalyzer, map[string]any{
		"type":          custom.Name,
		"tokenizer":     single.Name,
		"token_filters": []any{lowercase.Name},
	}); err != nil {
		return nil, err
	}
	filters := []any{en.PossessiveName, lowercase.Name, en.StopName, porter.Name}
	if syn.Len() > 0 {
		if err := m.AddCustomTokenFilter(synonymFilter, syn.filterConfig()); err != nil {
			return nil, err
		}
		filters = append(filters, synonymFilter)
	}
	if err := m.AddCustomAnalyzer(textAnalyzer, map[string]any{
		"type":          custom.Name,
		"tokenizer":     unicode.Name,
		"token_filters": filters,
	}); err != nil {
		return nil, err
	}
	m.DefaultAnalyzer = textAnalyzer
	doc := bleve.NewDocumentStaticMapping()
	for name, f := range map[string]*mapping.FieldMapping{
		fTitle: text(true), fBody: text(true), fTags: text(false),
		fKind: keyword(), fProduct: keyword(), fEnv: keyword(),
		fURL: storedOnly(), fUpdated: storedOnly(), fSource: keyword(), fUpdatedMS: sortable(),
		fStatus: storedOnly(), fReplies: storedOnly(), fCreated: storedOnly(), fAnswered: storedOnly(),
		fAnswer: storedOnly(), fDetails: storedOnly(), fThread: storedOnly(), fAccepted: storedOnly(), fSignals: storedOnly(),
		fPeer: keyword(), fOrigin: storedOnly(),
	} {
		doc.AddFieldMappingsAt(name, f)
	}
	// No field is in bleve's composite _all field (IncludeInAll is false
	// for each), and no query reads it, but bleve still made and indexed
	// an empty one with every document: disabled (since kfa-search-5).
	doc.AddSubDocumentMapping("_all", bleve.NewDocumentDisabledMapping())
	m.DefaultMapping = doc
	m.StoreDynamic = false
	m.IndexDynamic = false
	m.DocValuesDynamic = false
	return m, nil
}
