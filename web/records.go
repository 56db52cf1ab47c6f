package web

import (
	"net/http"
	"net/url"

	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/service"
)

// recordsContent is the records browse page's data.
type recordsContent struct {
	Kind, Product string
	Page          knowledge.BrowsePage
	// Next links to the next page; "" on the last.
	Next string
}

// Link is the browse narrowed to kind and product ("" for any).
func (c recordsContent) Link(kind, product string) string {
	q := url.Values{}
	if kind != "" {
		q.Set("kind", kind)
	}
	if product != "" {
		q.Set("product", product)
	}
	if len(q) == 0 {
		return "/records"
	}
	return "/records?" + q.Encode()
}

// records browses the knowledge records, newest first, by kind and
// product, a page at a time.
func (h *Handler) records(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	q := r.URL.Query()
	bq := service.BrowseQuery{Kind: q.Get("kind"), Product: q.Get("product"), PageToken: q.Get("pageToken")}
	p, err := h.deps.Service.BrowseRecords(r.Context(), bq)
	if err != nil {
		h.failErr(w, r, v, err)
		return
	}
	c := recordsContent{Kind: bq.Kind, Product: bq.Product, Page: p}
	if p.Next != "" {
		nq := url.Values{"pageToken": {p.Next}}
		if bq.Kind != "" {
			nq.Set("kind", bq.Kind)
		}
		if bq.Product != "" {
			nq.Set("product", bq.Product)
		}
		c.Next = "/records?" + nq.Encode()
	}
	h.render(w, r, v, page{name: "records", status: http.StatusOK, title: "Records", section: "records",
		content: c, maxAge: pageMaxAge})
}
