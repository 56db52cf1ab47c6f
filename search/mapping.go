package search

import (
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/single"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
)

// schemaVersion names the mapping below. An index built by another version
// is rebuilt on open, so changing the mapping or the analysers only needs
// a new value here.
const schemaVersion = "kfa-search-1"

// Field names of record documents.
const (
	fTitle   = "title"
	fBody    = "body"
	fTags    = "tags"
	fKind    = "kind"
	fProduct = "product"
	fEnv     = "environment"
	fURL     = "url"
	fUpdated = "updated"
)

// Field names of discussion documents.
const (
	fAnswers = "answers"
	fReplies = "replies"
)

// keywordAnalyzer indexes a whole value as one lower-cased term, so the
// filters match exactly, ignoring case.
const keywordAnalyzer = "kfa_keyword"

// recordDoc is what the index holds for a record.
type recordDoc struct {
	Title       string   `json:"title"`
	Body        string   `json:"body"`
	Tags        []string `json:"tags"`
	Kind        string   `json:"kind"`
	Product     string   `json:"product"`
	Environment string   `json:"environment"`
	URL         string   `json:"url"`
	Updated     string   `json:"updated"`
}

// discussionDoc is what the index holds for an answered discussion.
type discussionDoc struct {
	Title   string `json:"title"`
	Body    string `json:"body"`
	Answers string `json:"answers"`
	Replies string `json:"replies"` // reply count, to notice new replies
}

func text(store, vectors bool) *mapping.FieldMapping {
	f := bleve.NewTextFieldMapping()
	f.Analyzer = en.AnalyzerName
	f.Store = store
	f.IncludeTermVectors = vectors
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

func storedOnly() *mapping.FieldMapping {
	f := bleve.NewTextFieldMapping()
	f.Index = false
	f.Store = true
	f.IncludeTermVectors = false
	f.IncludeInAll = false
	f.DocValues = false
	return f
}

func newMapping(fields map[string]*mapping.FieldMapping) (*mapping.IndexMappingImpl, error) {
	m := bleve.NewIndexMapping()
	m.ScoringModel = index.BM25Scoring
	if err := m.AddCustomAnalyzer(keywordAnalyzer, map[string]any{
		"type":          custom.Name,
		"tokenizer":     single.Name,
		"token_filters": []any{lowercase.Name},
	}); err != nil {
		return nil, err
	}
	m.DefaultAnalyzer = en.AnalyzerName
	doc := bleve.NewDocumentStaticMapping()
	for name, f := range fields {
		doc.AddFieldMappingsAt(name, f)
	}
	m.DefaultMapping = doc
	m.StoreDynamic = false
	m.IndexDynamic = false
	m.DocValuesDynamic = false
	return m, nil
}

// recordMapping: title, body and tags are analysed English text with term
// vectors (which query terms matched: coverage; where: snippets); kind, product and environment
// are keywords; url and updated are only stored, to answer from the index.
func recordMapping() (*mapping.IndexMappingImpl, error) {
	return newMapping(map[string]*mapping.FieldMapping{
		fTitle:   text(true, true),
		fBody:    text(true, true),
		fTags:    text(false, true),
		fKind:    keyword(),
		fProduct: keyword(),
		fEnv:     keyword(),
		fURL:     storedOnly(),
		fUpdated: storedOnly(),
	})
}

func discussionMapping() (*mapping.IndexMappingImpl, error) {
	return newMapping(map[string]*mapping.FieldMapping{
		fTitle:   text(true, true),
		fBody:    text(true, true),
		fAnswers: text(true, true),
		fReplies: storedOnly(),
	})
}
