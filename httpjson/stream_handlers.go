package httpjson

import (
	"net/http"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// StreamMessage is A2A SendStreamingMessage over SSE. Errors before the
// stream starts are ordinary HTTP errors.
func (h *Binding) StreamMessage(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var req a2a.SendMessageRequest
	if err := h.readJSON(w, r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	st, err := h.deps.Service.SendStreamingMessage(r.Context(), c, &req, r.Header.Get("Last-Event-ID"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.pump(w, r, st)
}

// Subscribe is A2A SubscribeToTask over SSE, for GET (the proto's verb) and
// POST (the prose's and the TCK's).
func (h *Binding) Subscribe(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	st, err := h.deps.Service.SubscribeToTask(r.Context(), c, httpkit.PathVar(r, "id"), r.Header.Get("Last-Event-ID"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.pump(w, r, st)
}

func (h *Binding) pump(w http.ResponseWriter, r *http.Request, st *service.Stream) {
	defer st.Close()
	sse := httpkit.StartSSE(w)
	httpkit.Pump(r.Context(), sse, st.Events(), h.deps.StreamHeartbeat, func(ev service.Event) error { return sse.Event(ev.ID, ev.Resp) })
}

// ExtendedCard answers GetExtendedAgentCard: the card plus what the
// caller may still do, anonymous callers included; a bad credential is
// refused.
func (h *Binding) ExtendedCard(w http.ResponseWriter, r *http.Request) {
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
