package web

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/service"
	"github.com/kfa-project/kfa/trust"
)

// homeListLen is how many open and answered questions the home page lists.
const homeListLen = 5

// homeContent is the home page's data.
type homeContent struct {
	Search   searchForm
	Records  int
	Open     discussions.ListResult
	Answered discussions.ListResult
	Names    agentNames // shows the authors
	// Waited are the open questions an agent still waits on (a WORKING
	// task), newest asked or joined first: an open question whose every
	// task was canceled waits on nobody, and is listed under /discussions.
	Waited []discussions.Discussion
}

// home shows the search box, counts, open and answered questions.
func (h *Handler) home(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	ctx := r.Context()
	c := homeContent{}
	var err error
	if c.Open, err = h.deps.Service.ListDiscussions(ctx, service.DiscussionsQuery{Status: string(discussions.StatusOpen), PageSize: new(homeListLen)}); err != nil {
		h.failErr(w, r, v, err)
		return
	}
	if c.Waited, err = h.deps.Service.WaitedOn(ctx, homeListLen); err != nil {
		h.failErr(w, r, v, err)
		return
	}
	if c.Answered, err = h.deps.Service.ListDiscussions(ctx, service.DiscussionsQuery{Status: string(discussions.StatusAnswered), PageSize: new(homeListLen)}); err != nil {
		h.failErr(w, r, v, err)
		return
	}
	recs, err := h.deps.Service.ListRecords(ctx, "", new(1))
	if err != nil {
		h.failErr(w, r, v, err)
		return
	}
	c.Records = recs.Total
	c.Names = h.names(ctx, authors(c.Open.Discussions, c.Answered.Discussions)...)
	h.render(w, r, v, page{name: "home", status: http.StatusOK, title: "Knowledge for agents", section: "home",
		content: c, maxAge: pageMaxAge})
}

// waitedOn returns the open questions agents wait on, newest first: those

// searchForm is what the search box shows.
type searchForm struct {
	Query string
	Kind  string
	// Trust narrows the answers: "voted" (a score of 1 or more) or
	// "worked" (a trust of trustWorked or more); "" for any.
	Trust string
}

// trustWorked is the trust the "worked" filter asks for: about one
// "worked" report from the last year.
const trustWorked = 0.5

// query is the search the form asks for.
func (f searchForm) query() knowledge.Query {
	q := knowledge.Query{Text: f.Query, Kind: f.Kind, Limit: knowledge.MaxLimit}
	switch f.Trust {
	case "voted":
		q.MinScore = new(1)
	case "worked":
		q.MinTrust = new(trustWorked)
	}
	return q
}

// searchContent is the search page's data.
type searchContent struct {
	Form     searchForm
	Searched bool
	Results  []result
	Error    string
}

// result is one search result: a record, or a discussion (status and reply
// count set).
type result struct {
	Source      string // "record" or "discussion"
	ID          string
	Title       string
	Snippet     string
	Page        string // the kfa page of the result
	Kind        string
	Product     string
	Environment string
	SourceURL   string // a record's own link
	UpdatedAt   time.Time
	Status      discussions.Status
	ReplyCount  int
	AnsweredAt  time.Time
	// Peer names the peer a followed document comes from ("" for a local
	// one); Page is then its page on the peer.
	Peer string
	// Signals are the record's, or the discussion's answer's; Author
	// wrote the answer (nil for a record).
	Signals knowledge.Signals
	Author  *knowledge.Author
}

// Trust is the result's trust as the page shows it.
func (r result) Trust() string { return strconv.FormatFloat(r.Signals.Trust, 'f', -1, 64) }

// AuthorLink is the answer's author as a link with the reputation.
func (r result) AuthorLink() authorLink {
	if r.Author == nil {
		return authorLink{}
	}
	return authorLink{Name: r.Author.Name, ID: r.Author.ID, Rep: r.Author.Reputation, HasRep: true}
}

// Search result sources.
const (
	sourceRecord     = "record"
	sourceDiscussion = "discussion"
)

// results lists what a search returned, best first: records, answered
// discussions, and open discussions that ask the same question.
func results(res knowledge.Result) []result {
	out := make([]result, 0, len(res.Hits))
	for _, hit := range res.Hits {
		r := result{Source: sourceRecord, ID: hit.ID, Title: hit.Title, Snippet: hit.Snippet,
			Page: "/records/" + url.PathEscape(hit.ID), Kind: hit.Kind, Product: hit.Product,
			Environment: hit.Environment, SourceURL: hit.URL, UpdatedAt: hit.UpdatedAt, Signals: hit.Signals, Author: hit.Author}
		if hit.Source == knowledge.SourceDiscussion {
			r.Source, r.Page = sourceDiscussion, "/discussions/"+url.PathEscape(hit.ID)
			r.Status, r.ReplyCount, r.AnsweredAt = discussions.Status(hit.Status), hit.ReplyCount, hit.AnsweredAt
		}
		if hit.Origin != nil {
			r.Peer, r.Page = hit.Origin.Peer, hit.Origin.URL
		}
		out = append(out, r)
	}
	return out
}

// search runs the search skill's search for the query in ?q=, narrowed by
// ?kind=. Without a query it shows the search box.
func (h *Handler) search(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	q := r.URL.Query()
	c := searchContent{Form: searchForm{Query: q.Get("q"), Kind: q.Get("kind"), Trust: q.Get("trust")}}
	p := page{name: "search", status: http.StatusOK, title: "Search", section: "search", content: &c, maxAge: pageMaxAge}
	if c.Form.Query == "" {
		h.render(w, r, v, p)
		return
	}
	c.Searched = true
	p.title = "Search: " + c.Form.Query
	caller := service.Caller{Agent: v.Agent, Addr: clientAddr(r)}
	res, err := h.deps.Service.Search(r.Context(), caller, c.Form.query())
	if err != nil {
		e := service.ToError(err)
		if e.Kind.HTTPStatus >= 500 || e.RetryAfter > 0 {
			h.failErr(w, r, v, err)
			return
		}
		c.Error, p.status, p.maxAge = e.Message, e.Kind.HTTPStatus, 0
		h.render(w, r, v, p)
		return
	}
	c.Results = results(res)
	h.render(w, r, v, p)
}

// listContent is the discussions page's data.
type listContent struct {
	Status discussions.Status
	// Oldest lists oldest first (?sort=oldest): the questions that have
	// waited longest.
	Oldest bool
	List   discussions.ListResult
	Next   string     // link to the next page; "" on the last
	Names  agentNames // shows the authors
}

// discussionList lists discussions newest first (?sort=oldest: the ones
// that have waited longest first), ?status=open|answered, paginated with
// the API's page tokens.
func (h *Handler) discussionList(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	q := r.URL.Query()
	oldest := q.Get("sort") == "oldest"
	res, err := h.deps.Service.ListDiscussions(r.Context(), service.DiscussionsQuery{Status: q.Get("status"), PageToken: q.Get("pageToken"),
		Oldest: oldest})
	if err != nil {
		h.failErr(w, r, v, err)
		return
	}
	status := discussions.Status(q.Get("status")) // the service took it
	c := listContent{Status: status, Oldest: oldest, List: res, Names: h.names(r.Context(), authors(res.Discussions)...)}
	if res.NextPageToken != "" {
		nq := url.Values{"pageToken": {res.NextPageToken}}
		if status != "" {
			nq.Set("status", string(status))
		}
		if oldest {
			nq.Set("sort", "oldest")
		}
		c.Next = "/discussions?" + nq.Encode()
	}
	title, section := "All questions", "all"
	switch status {
	case discussions.StatusOpen:
		title, section = "Open questions", "open"
	case discussions.StatusAnswered:
		title, section = "Answered questions", "answered"
	}
	h.render(w, r, v, page{name: "discussions", status: http.StatusOK, title: title, section: section,
		content: c, maxAge: pageMaxAge})
}

// recordContent is the record page's data.
type recordContent struct {
	Record  knowledge.Record
	Signals signalsView
}

// record shows one knowledge record with its source link.
func (h *Handler) record(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	rec, err := h.deps.Service.Record(r.Context(), pathVar(r, "id"))
	if err != nil {
		if errors.Is(err, knowledge.ErrNotFound) || isInputErr(err) {
			h.notFound(w, r, v, "There is no knowledge record with this id. It may have been removed.")
			return
		}
		h.failErr(w, r, v, err)
		return
	}
	b, err := h.deps.Service.RecordSignals(r.Context(), service.Caller{Agent: v.Agent, Addr: clientAddr(r)}, rec.ID)
	if err != nil {
		h.failErr(w, r, v, err)
		return
	}
	c := recordContent{Record: rec, Signals: h.signals(v, b, trust.RecordItem(rec.ID))}
	h.render(w, r, v, page{name: "record", status: http.StatusOK, title: rec.Title, content: c, maxAge: pageMaxAge})
}

func isInputErr(err error) bool {
	var ie *input.Error
	return errors.As(err, &ie)
}
