package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/sessions"
)

// loginContent is the sign-in page's data.
type loginContent struct {
	// Token is the sign-in form's CSRF token (keyed by the sign-in
	// cookie's nonce); never the agent token.
	Token string
	Next  string
	Error string
	TTL   string
}

// signInNonce returns the nonce of the sign-in cookie, setting a new
// cookie when there is none.
func (h *Handler) signInNonce(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(signInCookie); err == nil && sessions.WellFormed(c.Value) {
		return c.Value
	}
	n := sessions.NewNonce()
	h.setCookie(w, signInCookie, n, "/login", signInTTL)
	return n
}

// loginPage shows the sign-in form (or, to a signed-in person, who they
// are signed in as).
func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	h.renderLogin(w, r, v, http.StatusOK, localPath(r.URL.Query().Get("next")), "")
}

func (h *Handler) renderLogin(w http.ResponseWriter, r *http.Request, v visitor, status int, next, msg string) {
	c := loginContent{Next: next, Error: msg, TTL: days(h.deps.Service.SessionTTL().Hours())}
	if v.Agent == nil {
		c.Token = sessions.FormToken(h.signInNonce(w, r), sessions.PurposeSignIn)
	}
	// The form's token is tied to a cookie: the page is never cached.
	h.render(w, r, v, page{name: "login", status: status, title: "Sign in", section: "login", content: c})
}

// login starts a session from the token pasted into the form. The token
// arrives only in the POST body, and the answer redirects (303), so it is
// never in a URL or in the browser's history. A failed attempt counts
// against the address's budget of failed authentications, shared with the
// API's bearer tokens.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	form, ok := h.readForm(w, r, v)
	if !ok {
		return
	}
	next := localPath(form.Get("next"))
	nonce := ""
	if c, err := r.Cookie(signInCookie); err == nil {
		nonce = c.Value
	}
	if !sessions.CheckFormToken(nonce, sessions.PurposeSignIn, form.Get("csrf")) {
		h.renderLogin(w, r, v, http.StatusForbidden, next,
			"This sign-in form expired or was not sent from this site. Paste your token again and sign in.")
		return
	}
	st, err := h.deps.Service.SignIn(r.Context(), form.Get("token"), clientAddr(r))
	var limited *a2a.Error
	switch {
	case errors.As(err, &limited) && limited.Kind == a2a.RateLimited:
		w.Header().Set("Retry-After", strconv.Itoa(a2a.RetryAfterSeconds(limited.RetryAfter)))
		h.renderLogin(w, r, v, http.StatusTooManyRequests, next,
			"Too many failed sign-ins from your address. Wait a minute and try again.")
		return
	case errors.Is(err, agents.ErrInvalidToken):
		h.renderLogin(w, r, v, http.StatusUnauthorized, next,
			"That token does not sign in: it is mistyped, unknown, or its agent was revoked.")
		return
	case errors.Is(err, sessions.ErrRotatedToken):
		h.renderLogin(w, r, v, http.StatusUnauthorized, next,
			"That token was rotated. Sign in with the agent's new token.")
		return
	case err != nil:
		h.failErr(w, r, v, err)
		return
	}
	if v.SessionID != "" {
		// Signing in again replaces the session this browser had.
		if err := h.deps.Service.SignOut(r.Context(), v.SessionID); err != nil {
			h.logError(w, "end the replaced web session", err)
		}
	}
	h.setCookie(w, sessionCookie, st.ID, "/", h.deps.Service.SessionTTL())
	h.clearCookie(w, signInCookie, "/login")
	w.Header().Set("Cache-Control", "private, no-store")
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logoutPage answers a person who typed or followed /logout: signing out
// changes state, so a GET only offers the Sign out button (a POST with the
// session's form token); without a session there is nothing to end and
// the answer is the home page.
func (h *Handler) logoutPage(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	if v.Agent == nil {
		w.Header().Set("Cache-Control", "private, no-store")
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	h.render(w, r, v, page{name: "logout", status: http.StatusOK, title: "Sign out", section: "login"})
}

// logout ends the session and deletes its cookie. Without a session there
// is nothing to end, and the answer is the same redirect.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	form, ok := h.readForm(w, r, v)
	if !ok {
		return
	}
	if v.SessionID != "" {
		if !sessions.CheckFormToken(v.SessionID, sessions.PurposeSession, form.Get("csrf")) {
			h.fail(w, r, v, http.StatusForbidden, "Form expired",
				"This sign-out form was not sent from a page kfa gave you. Open any page and use its Sign out button.")
			return
		}
		if err := h.deps.Service.SignOut(r.Context(), v.SessionID); err != nil {
			h.failErr(w, r, v, err)
			return
		}
		h.clearCookie(w, sessionCookie, "/")
	}
	w.Header().Set("Cache-Control", "private, no-store")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// days writes a whole number of hours as days when it is one.
func days(hours float64) string {
	switch {
	case hours >= 48 && int(hours)%24 == 0:
		return strconv.Itoa(int(hours)/24) + " days"
	case hours == 1:
		return "1 hour"
	case hours == float64(int(hours)):
		return strconv.Itoa(int(hours)) + " hours"
	}
	return strconv.FormatFloat(hours, 'f', 1, 64) + " hours"
}
