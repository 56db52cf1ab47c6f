package apiv1

import (
	"net/http"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/service"
)

// FlagDiscussion flags a discussion for moderation (the post scope).
func (h *Handler) FlagDiscussion(w http.ResponseWriter, r *http.Request) {
	h.flag(w, r, httpkit.PathVar(r, "id"), "")
}

// FlagReply flags one reply of a discussion for moderation (the post
// scope).
func (h *Handler) FlagReply(w http.ResponseWriter, r *http.Request) {
	h.flag(w, r, httpkit.PathVar(r, "id"), httpkit.PathVar(r, "replyId"))
}

// flag records the caller's flag: 201 for a new one, 200 with
// alreadyFlagged when the caller had flagged the item before (nothing is
// written then).
func (h *Handler) flag(w http.ResponseWriter, r *http.Request, discussionID, replyID string) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var req api.FlagRequest
	if err := httpkit.ReadJSON(w, r, h.deps.MaxBodyBytes, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Service.Flag(r.Context(), c,
		service.FlagInput{DiscussionID: discussionID, ReplyID: replyID, Reason: req.Reason, Note: req.Note})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	kind := moderation.KindDiscussion
	if replyID != "" {
		kind = moderation.KindReply
	}
	status := http.StatusCreated
	if res.AlreadyFlagged {
		status = http.StatusOK
	}
	httpkit.WriteJSON(w, status, api.FlagResponse{ItemID: res.ItemID, ItemKind: string(kind), AlreadyFlagged: res.AlreadyFlagged})
}

// AcceptReply marks a reply as the answer the discussion's asker accepts;
// anyone else gets 403.
func (h *Handler) AcceptReply(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Service.Accept(r.Context(), c, httpkit.PathVar(r, "id"), httpkit.PathVar(r, "replyId"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.AcceptResponse{DiscussionID: res.Discussion.ID,
		AcceptedReplyID: res.Discussion.AcceptedReplyID, Changed: res.Changed})
}
