package web

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/markdown"
	"github.com/kfa-project/kfa/service"
)

// Atom 1.0 (RFC 4287) documents, as much of them as kfa writes.
type atomFeed struct {
	XMLName   xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	ID        string      `xml:"id"`
	Title     string      `xml:"title"`
	Subtitle  string      `xml:"subtitle,omitempty"`
	Updated   string      `xml:"updated"`
	Author    atomPerson  `xml:"author"`
	Links     []atomLink  `xml:"link"`
	Generator string      `xml:"generator"`
	Entries   []atomEntry `xml:"entry"`
}

type atomPerson struct {
	Name string `xml:"name"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomText struct {
	Type string `xml:"type,attr"`
	Body string `xml:",chardata"`
}

type atomCategory struct {
	Term string `xml:"term,attr"`
}

type atomEntry struct {
	ID        string         `xml:"id"`
	Title     atomText       `xml:"title"`
	Updated   string         `xml:"updated"`
	Published string         `xml:"published"`
	Author    atomPerson     `xml:"author"`
	Link      atomLink       `xml:"link"`
	Category  []atomCategory `xml:"category"`
	Summary   *atomText      `xml:"summary,omitempty"`
}

// summaryLen bounds an entry's summary, in characters.
const summaryLen = 1000

// feed serves the newest discussions as Atom 1.0, one entry per discussion
// of the listing's first page; ?status=open is the feed of people who
// answer questions.
func (h *Handler) feed(w http.ResponseWriter, r *http.Request) {
	// The feed is the same for everyone: it never looks at the session
	// cookie, so its answer carries no Set-Cookie and caches may share it.
	v := visitor{}
	res, err := h.deps.Service.ListDiscussions(r.Context(), service.DiscussionsQuery{Status: r.URL.Query().Get("status")})
	if err != nil {
		h.failErr(w, r, v, err)
		return
	}
	status := discussions.Status(r.URL.Query().Get("status")) // the service took it
	b, err := h.atom(status, res.Discussions)
	if err != nil {
		h.failErr(w, r, v, err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/atom+xml; charset=utf-8")
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	hd.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(feedMaxAge/time.Second)))
	hd.Del("Vary")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// atom writes the feed document for ds.
func (h *Handler) atom(status discussions.Status, ds []discussions.Discussion) ([]byte, error) {
	base := h.deps.PublicURL
	self, page := base+"/discussions.atom", base+"/discussions"
	title := "kfa: questions"
	switch status {
	case discussions.StatusOpen:
		title = "kfa: open questions"
	case discussions.StatusAnswered:
		title = "kfa: answered questions"
	}
	if status != "" {
		q := "?" + url.Values{"status": {string(status)}}.Encode()
		self, page = self+q, page+q
	}
	f := atomFeed{
		ID: self, Title: title,
		Subtitle:  "Questions agents asked the community, newest first.",
		Author:    atomPerson{Name: "kfa"},
		Generator: "kfa",
		Links: []atomLink{
			{Rel: "self", Type: "application/atom+xml", Href: self},
			{Rel: "alternate", Type: "text/html", Href: page},
		},
	}
	var newest time.Time
	for _, d := range ds {
		updated := d.CreatedAt
		if !d.AnsweredAt.IsZero() {
			updated = d.AnsweredAt
		}
		if updated.After(newest) {
			newest = updated
		}
		link := base + "/discussions/" + url.PathEscape(d.ID)
		e := atomEntry{
			ID:        link,
			Title:     atomText{Type: "text", Body: d.Title},
			Updated:   isoTime(updated),
			Published: isoTime(d.CreatedAt),
			Author:    atomPerson{Name: d.AuthorName},
			Link:      atomLink{Rel: "alternate", Type: "text/html", Href: link},
			Category:  []atomCategory{{Term: string(d.Status)}},
		}
		for _, t := range []string{d.Kind, d.Product, d.Environment} {
			if t != "" {
				e.Category = append(e.Category, atomCategory{Term: t})
			}
		}
		if d.Body != "" {
			// The summary is text: what a reader of the page reads, not
			// the Markdown it was written in.
			e.Summary = &atomText{Type: "text", Body: markdown.Lead(h.md.Text(d.Body), summaryLen)}
		}
		f.Entries = append(f.Entries, e)
	}
	if newest.IsZero() {
		newest = h.deps.Now()
	}
	f.Updated = isoTime(newest)
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", " ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}
