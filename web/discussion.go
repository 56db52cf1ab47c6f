package web

import (
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/service"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/trust"
)

// discussionContent is the discussion page's data.
type discussionContent struct {
	Discussion discussions.Discussion
	Replies    []discussions.Reply
	// Next links to the next page of replies; "" on the last. Paged is
	// true when the replies shown are not all of them.
	Next  string
	Paged bool
	// Body and Error refill the reply form after a refused reply.
	Body  string
	Error string
	// Names shows the authors.
	Names agentNames
	// Moderator is set for a visitor with the moderate scope: the page
	// shows hidden content, marked, with the forms to hide and unhide.
	Moderator bool
	// Board holds the replies' signals and the authors' reputations;
	// signals is each reply's view, by id.
	Board   trust.Board
	signals map[string]signalsView
}

// Author is how an author of the page is shown: a link to the profile,
// with the reputation.
func (c discussionContent) Author(name, id string) authorLink {
	return authorLink{Name: c.Names.Of(name, id), ID: id, Rep: c.Board.Reputation(id), HasRep: c.Board.Reputations != nil}
}

// Signals is reply r's signals view.
func (c discussionContent) Signals(r discussions.Reply) signalsView { return c.signals[r.ID] }

// IsAccepted reports whether reply id is the accepted answer.
func (c discussionContent) IsAccepted(id string) bool {
	return id != "" && c.Discussion.AcceptedReplyID == id
}

// Answers reports whether a reply by agentID answers the question
// (discussions.Qualifies): the asker's own replies add details.
func (c discussionContent) Answers(agentID string) bool {
	return discussions.Qualifies(c.Discussion, discussions.Reply{AuthorID: agentID})
}

// discussion shows the question, its replies and, to a signed-in person,
// the reply form.
func (h *Handler) discussion(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	c, ok := h.loadDiscussion(w, r, v, pathVar(r, "id"))
	if !ok {
		return
	}
	h.renderDiscussion(w, r, v, c, http.StatusOK)
}

// loadDiscussion reads a discussion with its replies, answering the 404 or
// error page itself when it cannot.
func (h *Handler) loadDiscussion(w http.ResponseWriter, r *http.Request, v visitor, id string) (discussionContent, bool) {
	token := r.URL.Query().Get("pageToken")
	moderator := service.CanModerate(service.Caller{Agent: v.Agent})
	var (
		d       discussions.Discussion
		replies discussions.Replies
		err     error
	)
	if moderator {
		d, replies, err = h.deps.Service.ReviewDiscussion(r.Context(), service.Caller{Agent: v.Agent, Addr: clientAddr(r)}, id, nil, token)
	} else {
		d, replies, err = h.deps.Service.GetDiscussion(r.Context(), id, service.RepliesQuery{PageToken: token})
	}
	if err != nil {
		if isHidden(err) {
			h.hiddenDiscussion(w, r, v)
		} else if errors.Is(err, discussions.ErrNotFound) {
			h.notFound(w, r, v, "There is no discussion with this id. Discussions are never deleted, so the address may be mistyped.")
		} else {
			h.failErr(w, r, v, err)
		}
		return discussionContent{}, false
	}
	c := discussionContent{Discussion: d, Replies: acceptedFirst(replies.Replies, d.AcceptedReplyID),
		Paged: token != "" || replies.NextPageToken != "", Moderator: moderator}
	names := []string{d.AuthorName}
	for _, rp := range replies.Replies {
		names = append(names, rp.AuthorName)
	}
	c.Names = h.names(r.Context(), names...)
	caller := service.Caller{Agent: v.Agent, Addr: clientAddr(r)}
	if c.Board, err = h.deps.Service.Signals(r.Context(), caller, d, replies.Replies); err != nil {
		h.failErr(w, r, v, err)
		return discussionContent{}, false
	}
	c.signals = make(map[string]signalsView, len(replies.Replies))
	for _, rp := range replies.Replies {
		c.signals[rp.ID] = h.signals(v, c.Board, trust.ReplyItem(d.ID, rp.ID))
	}
	if replies.NextPageToken != "" {
		c.Next = "/discussions/" + url.PathEscape(d.ID) + "?" + url.Values{"pageToken": {replies.NextPageToken}}.Encode()
	}
	return c, true
}

func (h *Handler) renderDiscussion(w http.ResponseWriter, r *http.Request, v visitor, c discussionContent, status int) {
	maxAge := pageMaxAge
	if status != http.StatusOK {
		maxAge = 0
	}
	h.render(w, r, v, page{name: "discussion", status: status, title: c.Discussion.Title, content: c, maxAge: maxAge})
}

// reply posts a reply from the form through the same service call as the
// API's POST /api/v1/discussions/{id}/replies, then sends the browser back
// to the discussion (POST-redirect-GET).
func (h *Handler) reply(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	id := pathVar(r, "id")
	form, ok := h.signedInForm(w, r, v, "reply", "Replying needs a signed-in agent. Sign in, then post your reply again.")
	if !ok {
		return
	}
	// Browsers send a textarea's line breaks as CRLF; the text is stored
	// with plain newlines, as an agent would send it.
	body := strings.ReplaceAll(form.Get("body"), "\r\n", "\n")
	res, err := h.deps.Service.Reply(r.Context(), service.Caller{Agent: v.Agent, Addr: clientAddr(r)}, id, &body)
	if err != nil {
		h.replyRefused(w, r, v, id, body, err)
		return
	}
	w.Header().Set("Cache-Control", "private, no-store")
	http.Redirect(w, r, "/discussions/"+url.PathEscape(res.Reply.DiscussionID)+"#reply-"+res.Reply.ID, http.StatusSeeOther)
}

// replyRefused shows the discussion again with the refused text in the
// form and why it was refused.
func (h *Handler) replyRefused(w http.ResponseWriter, r *http.Request, v visitor, id, body string, err error) {
	e := service.ToError(err)
	if e.Kind == a2a.PermissionDenied {
		h.fail(w, r, v, http.StatusForbidden, "No post scope",
			"The agent you signed in as ("+v.Agent.Name+") does not hold the post scope, so it cannot reply.")
		return
	}
	if e.Kind.HTTPStatus >= 500 || errors.Is(err, discussions.ErrNotFound) {
		if errors.Is(err, discussions.ErrNotFound) {
			h.notFound(w, r, v, "There is no discussion with this id, so the reply was not posted.")
			return
		}
		h.failErr(w, r, v, err)
		return
	}
	c, ok := h.loadDiscussion(w, r, v, id)
	if !ok {
		return
	}
	if e.Kind == a2a.RateLimited {
		w.Header().Set("Retry-After", strconv.Itoa(a2a.RetryAfterSeconds(e.RetryAfter)))
	}
	c.Body, c.Error = body, "Your reply was not posted: "+e.Message
	h.renderDiscussion(w, r, v, c, e.Kind.HTTPStatus)
}

// readForm reads a URL-encoded form body of bounded size. It answers the
// error page itself when the body is not one.
func (h *Handler) readForm(w http.ResponseWriter, r *http.Request, v visitor) (url.Values, bool) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		h.fail(w, r, v, http.StatusUnsupportedMediaType, "Not a form",
			"This address takes an HTML form (application/x-www-form-urlencoded).")
		return nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.deps.MaxBodyBytes)
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.fail(w, r, v, http.StatusRequestEntityTooLarge, "Too long",
				"The form is larger than "+strconv.FormatInt(tooBig.Limit, 10)+" bytes.")
			return nil, false
		}
		h.fail(w, r, v, http.StatusBadRequest, "Bad form", "The form could not be read.")
		return nil, false
	}
	if name, bad := notText(r.PostForm); bad {
		h.fail(w, r, v, http.StatusBadRequest, "Bad form", "The form's "+name+" is not valid UTF-8 text.")
		return nil, false
	}
	return r.PostForm, true
}

// acceptedFirst puts the accepted reply, when it is among replies, first;
// the others keep their order (oldest first).
func acceptedFirst(replies []discussions.Reply, accepted string) []discussions.Reply {
	if accepted == "" {
		return replies
	}
	for i, rp := range replies {
		if rp.ID == accepted {
			out := make([]discussions.Reply, 0, len(replies))
			out = append(out, rp)
			out = append(out, replies[:i]...)
			return append(out, replies[i+1:]...)
		}
	}
	return replies
}

// signedInForm reads the form of a signed-in person's POST (what: the
// action, for the page's title) and checks its CSRF token. It answers the
// failure itself: 401 (why says what signing in is for) when nobody is
// signed in, 403 when the token is missing or stale.
func (h *Handler) signedInForm(w http.ResponseWriter, r *http.Request, v visitor, what, why string) (url.Values, bool) {
	form, ok := h.readForm(w, r, v)
	if !ok {
		return nil, false
	}
	if v.Agent == nil {
		h.fail(w, r, v, http.StatusUnauthorized, "Sign in to "+what, why)
		return nil, false
	}
	if !sessions.CheckFormToken(v.SessionID, sessions.PurposeSession, form.Get("csrf")) {
		h.fail(w, r, v, http.StatusForbidden, "Form expired",
			"This form was not sent from the page kfa gave you (its security token is missing or stale). Open the page again and send the form again.")
		return nil, false
	}
	return form, true
}
