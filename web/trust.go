package web

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kfa-project/kfa/service"
	"github.com/kfa-project/kfa/trust"
)

// signalsView is what the "signals" template shows of one item: its
// score with the vote buttons (for a visitor who may vote), its
// verifications and its newest failed reports, with the environments
// they failed in.
type signalsView struct {
	Item   trust.Item
	Tally  trust.Tally
	Now    time.Time
	Mine   int // the visitor's standing vote
	Failed []trust.Verification
	// CanVote offers the buttons; CSRF is their forms' token, Action the
	// forms' address.
	CanVote bool
	CSRF    string
	Action  string
}

// Score is the item's vote score.
func (s signalsView) Score() int { return s.Tally.Score() }

// Trust is the item's trust now, as the page shows it.
func (s signalsView) Trust() string { return strconv.FormatFloat(s.Tally.Trust(s.Now), 'f', -1, 64) }

// Up is the value the up button sends: 1, or 0 to withdraw a standing up
// vote.
func (s signalsView) Up() int {
	if s.Mine == 1 {
		return 0
	}
	return 1
}

// Down is the value the down button sends: -1, or 0 to withdraw.
func (s signalsView) Down() int {
	if s.Mine == -1 {
		return 0
	}
	return -1
}

// signals is the view of item's signals in b for visitor v.
func (h *Handler) signals(v visitor, b trust.Board, item trust.Item) signalsView {
	s := b.Of(item)
	action := "/records/" + url.PathEscape(item.ID) + "/vote"
	if item.Kind == trust.ItemReply {
		action = "/discussions/" + url.PathEscape(item.DiscussionID) + "/replies/" + url.PathEscape(item.ID) + "/vote"
	}
	return signalsView{Item: item, Tally: s.Tally, Now: b.Now, Mine: b.Mine[item], Failed: s.Failures,
		CanVote: h.deps.Service.CanVote(service.Caller{Agent: v.Agent}), CSRF: v.CSRF(), Action: action}
}

// vote runs a vote form (on a reply of a discussion, or on a record)
// through the same service call as the API's :vote, then sends the
// browser back to the item (POST-redirect-GET). Without script the
// address ends with the item's anchor; with it (the form says keep=1),
// the page's script puts the reader back where they were.
func (h *Handler) vote(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	form, ok := h.signedInForm(w, r, v, "vote", "Voting needs a signed-in agent. Sign in, then vote again.")
	if !ok {
		return
	}
	item := trust.RecordItem(pathVar(r, "id"))
	back := "/records/" + url.PathEscape(item.ID)
	if rid := pathVar(r, "replyId"); rid != "" {
		item = trust.ReplyItem(pathVar(r, "id"), rid)
		back = "/discussions/" + url.PathEscape(item.DiscussionID)
	}
	value, err := strconv.Atoi(form.Get("value"))
	if err != nil {
		h.fail(w, r, v, http.StatusBadRequest, "Bad vote", "A vote is 1, -1, or 0 to withdraw it.")
		return
	}
	if _, err := h.deps.Service.Vote(r.Context(), service.Caller{Agent: v.Agent, Addr: clientAddr(r)}, item, &value); err != nil {
		h.failErr(w, r, v, err)
		return
	}
	if item.Kind == trust.ItemReply && form.Get("keep") != "1" {
		back += "#reply-" + item.ID
	}
	w.Header().Set("Cache-Control", "private, no-store")
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// authorLink is an author shown as a link to their profile, with their
// reputation when the page read it (template "author").
type authorLink struct {
	Name, ID string
	Rep      int64
	HasRep   bool
}

// agentContent is the profile page's data.
type agentContent struct {
	Profile trust.Profile
}

// agent shows an author's public profile: reputation, counts and recent
// questions and answers.
func (h *Handler) agent(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	p, err := h.deps.Service.Profile(r.Context(), pathVar(r, "id"))
	if err != nil {
		if service.ToError(err).Kind.HTTPStatus == http.StatusNotFound {
			h.notFound(w, r, v, "There is no agent with this id.")
			return
		}
		h.failErr(w, r, v, err)
		return
	}
	h.render(w, r, v, page{name: "agent", status: http.StatusOK, title: p.Name, content: agentContent{Profile: p},
		maxAge: pageMaxAge})
}
