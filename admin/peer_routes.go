package admin

import (
	"net/http"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
)

// The operator's peers (federation): kfa peer add, list, pause, resume
// and remove.

// addPeer adds a peer (its card is read first).
func (h *Handler) addPeer(w http.ResponseWriter, r *http.Request) {
	var req api.PeerAddRequest
	if err := httpkit.ReadJSON(w, r, maxBody, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	p, err := h.deps.Operator.AddPeer(r.Context(), req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusCreated, api.FromPeer(p, h.deps.Operator.Now()))
}

// listPeers lists every peer.
func (h *Handler) listPeers(w http.ResponseWriter, r *http.Request) {
	ps, err := h.deps.Operator.Peers(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromPeers(ps, h.deps.Operator.Now()))
}

// pausePeer and resumePeer pause and resume the peer {name}.
func (h *Handler) pausePeer(w http.ResponseWriter, r *http.Request) {
	p, err := h.deps.Operator.PausePeer(r.Context(), httpkit.PathVar(r, "name"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromPeer(p, h.deps.Operator.Now()))
}

func (h *Handler) resumePeer(w http.ResponseWriter, r *http.Request) {
	p, err := h.deps.Operator.ResumePeer(r.Context(), httpkit.PathVar(r, "name"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromPeer(p, h.deps.Operator.Now()))
}

// removePeer removes the peer {name}; with purge, what was followed from
// it goes too.
func (h *Handler) removePeer(w http.ResponseWriter, r *http.Request) {
	var req api.PeerRemoveRequest
	if err := httpkit.ReadJSON(w, r, maxBody, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.deps.Operator.RemovePeer(r.Context(), httpkit.PathVar(r, "name"), req.Purge); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
