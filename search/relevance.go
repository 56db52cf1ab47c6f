package search

// The honest miss and the partial match. A search is a miss unless the
// query is answerable: some record or answered discussion, filters aside,
// is an answer on its own (strict). Once it is, a candidate within the
// filters is a hit when it is an answer on its own or holds a good share
// of the query (partial). So a filter narrows the candidates without
// turning partial matches into a miss, and a query of nonsense, which
// nothing answers on its own, stays a miss with or without filters. Open
// discussions are not answers: each is a hit only when it asks the
// query's question closely (close), so that the asking agent joins it.
//
// Tuned on samples/relevance.json and the tables of relevance_test.go.
const (
	// minRelevance is the floor of a match's BM25 score times its
	// coverage (the share of the query's information it holds, see
	// coverage). bleve normalises every query's term weights
	// (queryNorm), so scores are on one scale across queries. The
	// expected answers reach 0.07 and more; off-topic questions that
	// share a common word with some record (how MANY calories..., best
	// pizza places OPEN late) 0.03 and less.
	minRelevance = 0.05
	// minScoredCoverage is the least coverage a match needs for its score
	// to count: a strong title match on the minor words of a question
	// ("a hot backup of a BBOLT FILE" against records about bbolt files,
	// 0.28) is not an answer when its subject is missing.
	minScoredCoverage = 1.0 / 3
	// fullCoverage is the coverage at which a match is an answer whatever
	// its score: it holds nearly all of the query's information. BM25
	// scores are small in a small index (every term is common among few
	// documents), so the score floor alone would hide exact answers.
	fullCoverage = 0.75
	// partialCoverage is the coverage a candidate needs to be listed once
	// the query is answerable: it holds a good share of the question
	// (half the words of a broad query, say), whatever its score.
	partialCoverage = 0.4
	// closeQuestion is the share of an open discussion's question the
	// query must ask (besides holding fullCoverage of the query) for the
	// discussion to be a hit: "bbolt hot backup" asks "How do I take a
	// hot backup of a bbolt file?", "bbolt file" does not.
	closeQuestion = 0.45
	// minShareOfAsked is the least share of an open discussion's coverage
	// a record or answered discussion listed beside it holds: beside the
	// open question the query asks, a record holding two of its five words
	// ("PostgreSQL" and "statement") is no answer, though on its own it
	// would be one, and listing it would draw the agent away from joining.
	minShareOfAsked = 0.5
)

// strict reports whether a match is an answer on its own.
func strict(score, cov float64) bool {
	return cov >= fullCoverage || cov >= minScoredCoverage && score*cov >= minRelevance
}

// partial reports whether a match holds enough of an answerable query to
// be listed.
func partial(cov float64) bool { return cov >= partialCoverage }

// asksClosely reports whether an open discussion asks the query's question:
// cov is the share of the query it holds, qcov the share of its question
// the query asks.
func asksClosely(cov, qcov float64) bool { return cov >= fullCoverage && qcov >= closeQuestion }
