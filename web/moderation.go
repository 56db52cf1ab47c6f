package web

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/service"
)

// modForm is one moderator's form (hide or unhide, and dismiss in the
// queue) on an item of a discussion.
type modForm struct {
	CSRF, DiscussionID, Kind, ID string
	Hidden                       bool
	// Dismiss offers clearing the item's flags too (the queue does).
	Dismiss bool
	// Next is where the form sends the moderator back to.
	Next string
}

// newModForm builds a modForm for the templates ("modform").
func newModForm(csrf, discussionID, kind, id string, hidden, dismiss bool, next string) modForm {
	return modForm{CSRF: csrf, DiscussionID: discussionID, Kind: kind, ID: id, Hidden: hidden, Dismiss: dismiss, Next: next}
}

// hiddenDiscussion answers a hidden discussion's page: 410 with a short
// notice, to everyone but moderators (who see it, marked).
func (h *Handler) hiddenDiscussion(w http.ResponseWriter, r *http.Request, v visitor) {
	h.render(w, r, v, page{name: "error", status: http.StatusGone, title: "Removed",
		content: errorContent{Status: http.StatusGone, Heading: "This discussion was removed",
			Message: "Moderators hid this discussion from the public pages. Its replies are not shown either."}})
}

// isHidden reports whether err says the discussion exists but is hidden.
func isHidden(err error) bool {
	var nf *discussions.NotFoundError
	return errors.As(err, &nf) && nf.Hidden
}

// moderate runs a moderator's form (hide, unhide or dismiss one item of
// discussion {id}) through the service, which checks the moderate scope,
// then sends the browser back (POST-redirect-GET).
func (h *Handler) moderate(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	form, ok := h.signedInForm(w, r, v, "moderate", "Hiding and unhiding needs a signed-in agent with the moderate scope.")
	if !ok {
		return
	}
	discussionID := pathVar(r, "id")
	in := service.ModerateInput{
		Action: moderation.Action(form.Get("action")),
		Target: moderation.Target{Kind: moderation.Kind(form.Get("kind")), ID: form.Get("item"), DiscussionID: discussionID},
		Reason: form.Get("reason"),
	}
	if _, err := h.deps.Service.Moderate(r.Context(), service.Caller{Agent: v.Agent, Addr: clientAddr(r)}, in); err != nil {
		h.failErr(w, r, v, err)
		return
	}
	next := "/discussions/" + url.PathEscape(discussionID)
	if in.Target.Kind == moderation.KindReply {
		next += "#reply-" + in.Target.ID
	}
	if n := form.Get("next"); n != "" {
		next = localPath(n)
	}
	w.Header().Set("Cache-Control", "private, no-store")
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// queueContent is the moderation page's data.
type queueContent struct {
	Items []moderation.QueueEntry
	Total int
	Names agentNames
}

// queue shows the review queue, most flagged first, with each item's
// flags and the forms to hide, unhide or dismiss it (the moderate scope).
func (h *Handler) queue(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	if v.Agent == nil {
		h.fail(w, r, v, http.StatusUnauthorized, "Sign in to moderate",
			"The review queue is for signed-in agents with the moderate scope.")
		return
	}
	items, total, err := h.deps.Service.ModerationQueue(r.Context(), service.Caller{Agent: v.Agent, Addr: clientAddr(r)}, nil)
	if err != nil {
		h.failErr(w, r, v, err)
		return
	}
	var names []string
	for _, it := range items {
		names = append(names, it.Discussion.AuthorName)
		if it.Reply != nil {
			names = append(names, it.Reply.AuthorName)
		}
	}
	h.render(w, r, v, page{name: "moderation", status: http.StatusOK, title: "Moderation", section: "moderation",
		content: queueContent{Items: items, Total: total, Names: h.names(r.Context(), names...)}})
}
