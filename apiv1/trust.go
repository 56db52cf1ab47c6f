package apiv1

import (
	"net/http"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
	"github.com/kfa-project/kfa/trust"
)

// replyItem is the reply the path names.
func replyItem(r *http.Request) trust.Item {
	return trust.ReplyItem(httpkit.PathVar(r, "id"), httpkit.PathVar(r, "replyId"))
}

// recordItem is the record the path names.
func recordItem(r *http.Request) trust.Item { return trust.RecordItem(httpkit.PathVar(r, "id")) }

// VoteReply votes on a reply (the post scope).
func (h *Handler) VoteReply(w http.ResponseWriter, r *http.Request) { h.vote(w, r, replyItem(r)) }

// VoteRecord votes on a record (the post scope).
func (h *Handler) VoteRecord(w http.ResponseWriter, r *http.Request) { h.vote(w, r, recordItem(r)) }

// vote records the caller's vote: 200 with the caller's standing vote
// and the item's signals (changed is false when the vote was standing
// already: nothing was written).
func (h *Handler) vote(w http.ResponseWriter, r *http.Request, item trust.Item) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var req api.VoteRequest
	if err := httpkit.ReadJSON(w, r, h.deps.MaxBodyBytes, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Service.Vote(r.Context(), c, item, req.Value)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromVoteResult(res))
}

// VerifyReply reports whether a reply worked (the post scope).
func (h *Handler) VerifyReply(w http.ResponseWriter, r *http.Request) { h.verify(w, r, replyItem(r)) }

// VerifyRecord reports whether a record worked (the post scope).
func (h *Handler) VerifyRecord(w http.ResponseWriter, r *http.Request) { h.verify(w, r, recordItem(r)) }

// verify records the caller's report: 200 with the report standing after
// and the item's signals.
func (h *Handler) verify(w http.ResponseWriter, r *http.Request, item trust.Item) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var req api.VerifyRequest
	if err := httpkit.ReadJSON(w, r, h.deps.MaxBodyBytes, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Service.Verify(r.Context(), c, item,
		service.VerifyInput{Outcome: req.Outcome, Environment: req.Environment, Note: req.Note})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromVerifyResult(res))
}

// GetAgent answers an agent's public profile (anyone).
func (h *Handler) GetAgent(w http.ResponseWriter, r *http.Request) {
	p, err := h.deps.Service.Profile(r.Context(), httpkit.PathVar(r, "id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.PublicRead(w)
	httpkit.WriteJSON(w, http.StatusOK, api.FromProfile(p))
}

// ResetReputation resets an agent's reputation to 0 (the moderate
// scope), with a reason for the audit log.
func (h *Handler) ResetReputation(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var req api.ResetRequest
	if err := httpkit.ReadJSON(w, r, h.deps.MaxBodyBytes, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	id := httpkit.PathVar(r, "id")
	before, err := h.deps.Service.ResetReputation(r.Context(), c, id, req.Reason)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.ResetResponse{AgentID: id, Before: before})
}
