package discovery

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kfa-project/kfa/internal/httpkit"
)

// Card serves the public agent card: anonymous, cacheable, with an ETag
// and a Last-Modified.
func (h *Handler) Card(w http.ResponseWriter, r *http.Request) {
	c, err := h.deps.Service.SignedCard(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set("ETag", c.ETag)
	hd.Set("Last-Modified", c.Modified.Format(http.TimeFormat))
	hd.Set("Cache-Control", h.maxAge())
	hd.Set("Access-Control-Allow-Origin", "*")
	if notModified(r, c.ETag, c.Modified) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	httpkit.WriteRaw(w, http.StatusOK, c.JSON)
}

// notModified applies a GET's preconditions (RFC 9110 §13.2.2): the
// entity tags of If-None-Match when it is sent, otherwise the date of
// If-Modified-Since, which a later change, or a date that does not parse,
// does not satisfy.
func notModified(r *http.Request, etag string, modified time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		return etagMatches(inm, etag)
	}
	ims, err := http.ParseTime(r.Header.Get("If-Modified-Since"))
	return err == nil && !modified.After(ims)
}

// etagMatches applies If-None-Match's weak comparison to a list of tags.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

// Card03 is the card in the A2A 0.3 shape, for 0.3 clients that discover
// the agent (at <jsonrpc endpoint>/agent-card.json) rather than being
// pointed at the endpoint.
func (h *Handler) Card03(w http.ResponseWriter, _ *http.Request) {
	hd := w.Header()
	hd.Set("Cache-Control", h.maxAge())
	hd.Set("Access-Control-Allow-Origin", "*")
	httpkit.WriteRaw(w, http.StatusOK, h.deps.Service.Card03())
}

// Info is the connectivity check: anonymous, made once at start, so it
// answers without touching the store.
func (h *Handler) Info(w http.ResponseWriter, _ *http.Request) {
	hd := w.Header()
	hd.Set("Cache-Control", "public, max-age=60")
	hd.Set("Access-Control-Allow-Origin", "*")
	httpkit.WriteRaw(w, http.StatusOK, h.deps.Service.Info())
}

// LLMsTxt serves /llms.txt, the guide made at start from what runs.
func (h *Handler) LLMsTxt(w http.ResponseWriter, _ *http.Request) {
	h.guide(w, "text/plain; charset=utf-8", h.deps.Service.LLMsTxt())
}

// AgentsMD serves /AGENTS.md, the guide made at start from what runs.
func (h *Handler) AgentsMD(w http.ResponseWriter, _ *http.Request) {
	h.guide(w, "text/markdown; charset=utf-8", h.deps.Service.AgentsMD())
}

func (h *Handler) guide(w http.ResponseWriter, contentType string, b []byte) {
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", h.maxAge())
	hd.Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// JWKS serves the public keys that verify KFA-Signature: anonymous and
// cacheable for a few minutes (a rotated-out key stays listed for much
// longer than that).
func (h *Handler) JWKS(w http.ResponseWriter, r *http.Request) {
	b, err := h.deps.JWKS(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set("Cache-Control", "public, max-age=300")
	hd.Set("Access-Control-Allow-Origin", "*")
	httpkit.WriteRaw(w, http.StatusOK, b)
}
