package httpjson

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
)

// card serves the public agent card: anonymous, cacheable, with an ETag
// and a Last-Modified.
func (h *Handler) card(w http.ResponseWriter, r *http.Request) {
	c, err := h.deps.Service.SignedCard(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set("ETag", c.ETag)
	hd.Set("Last-Modified", c.Modified.Format(http.TimeFormat))
	hd.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(h.deps.CardMaxAge.Seconds())))
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

// preflight answers CORS preflight for the anonymous, credential-free
// routes (the card and public discussion reads) only.
func (h *Handler) preflight(w http.ResponseWriter, _ *http.Request) {
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
	hd.Set("Access-Control-Allow-Headers", "If-None-Match, If-Modified-Since, A2A-Version")
	hd.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// extendedCard answers GetExtendedAgentCard: the card plus what the
// caller may still do, anonymous callers included; a bad credential is
// refused.
func (h *Handler) extendedCard(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	card, err := h.deps.Service.ExtendedCard(r.Context(), c)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, card)
}

// info is the connectivity check: anonymous, made once at start, so it
// answers without touching the store.
func (h *Handler) info(w http.ResponseWriter, _ *http.Request) {
	hd := w.Header()
	hd.Set("Cache-Control", "public, max-age=60")
	hd.Set("Access-Control-Allow-Origin", "*")
	httpkit.WriteRaw(w, http.StatusOK, h.deps.Service.Info())
}

// card03 is the card in the A2A 0.3 shape, for 0.3 clients that discover
// the agent (at <jsonrpc endpoint>/agent-card.json) rather than being
// pointed at the endpoint.
func (h *Handler) card03(w http.ResponseWriter, _ *http.Request) {
	hd := w.Header()
	hd.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(h.deps.CardMaxAge.Seconds())))
	hd.Set("Access-Control-Allow-Origin", "*")
	httpkit.WriteRaw(w, http.StatusOK, h.deps.Service.Card03())
}

// llmsTxt and agentsMD are the discovery guides, made at start from what
// runs.
func (h *Handler) llmsTxt(w http.ResponseWriter, _ *http.Request) {
	h.guide(w, "text/plain; charset=utf-8", h.deps.Service.LLMsTxt())
}

func (h *Handler) agentsMD(w http.ResponseWriter, _ *http.Request) {
	h.guide(w, "text/markdown; charset=utf-8", h.deps.Service.AgentsMD())
}

func (h *Handler) guide(w http.ResponseWriter, contentType string, b []byte) {
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(h.deps.CardMaxAge.Seconds())))
	hd.Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func (h *Handler) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	httpkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (h *Handler) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if h.deps.Ready != nil {
		if err := h.deps.Ready(); err != nil {
			h.fail(w, r, a2a.Errorf(a2a.Unavailable, "not ready: %v", err))
			return
		}
	}
	httpkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	if p := h.deps.Pages; p != nil && p.NotFound != nil && p.WantsHTML(r) {
		p.NotFound.ServeHTTP(w, r)
		return
	}
	h.fail(w, r, a2a.Errorf(a2a.NotFound, "no route for %s %s", r.Method, httpkit.Truncate(r.URL.Path, 128)))
}

// methodNotAllowed answers 405 with the methods the path does accept.
func (h *Handler) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		probe := r.Clone(r.Context())
		probe.Method = m
		var match mux.RouteMatch
		if h.router.Match(probe, &match) && match.MatchErr == nil {
			allow = append(allow, m)
		}
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	h.fail(w, r, a2a.Errorf(a2a.MethodNotAllowed, "%s is not allowed on %s; allowed: %s",
		r.Method, httpkit.Truncate(r.URL.Path, 128), strings.Join(allow, ", ")))
}
