package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/service"
)

// People sign in with their organisation's provider (docs/oauth.md):
// /login offers "Sign in with <provider>", /login/provider sends the
// browser there with a sealed flow cookie, and /login/callback finishes
// the sign-in into the same session a token sign-in gets.

// flowCookie carries the sign-in under way (state, nonce, PKCE verifier,
// where to return), sealed by the server, to the callback only.
const flowCookie = "kfa_oauth"

// providerSignIn starts a sign-in at the provider the query names
// (issuer), returning to next. It is a link, not a form: the page's
// Content-Security-Policy (form-action 'self') would stop a form's
// redirect to the provider, and starting a sign-in changes nothing here.
func (h *Handler) providerSignIn(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	q := r.URL.Query()
	next := localPath(q.Get("next"))
	redirect, sealed, err := h.deps.Service.BeginProviderSignIn(q.Get("issuer"), next)
	switch {
	case errors.Is(err, service.ErrSignInFlow):
		h.renderLogin(w, r, v, http.StatusNotFound, next, "This server does not sign people in with that provider.")
		return
	case err != nil:
		h.renderLogin(w, r, v, http.StatusServiceUnavailable, next, err.Error())
		return
	}
	h.setCookie(w, flowCookie, sealed, "/login/callback", signInTTL)
	w.Header().Set("Cache-Control", "private, no-store")
	http.Redirect(w, r, redirect, http.StatusSeeOther)
}

// providerCallback finishes a sign-in at a provider: the code is
// exchanged, the ID token checked, and a session starts for the agent of
// the person's identity.
func (h *Handler) providerCallback(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	q := r.URL.Query()
	sealed := ""
	if c, err := r.Cookie(flowCookie); err == nil {
		sealed = c.Value
	}
	h.clearCookie(w, flowCookie, "/login/callback")
	if e := q.Get("error"); e != "" {
		msg := "The provider did not sign you in (" + e + ")"
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		h.renderLogin(w, r, v, http.StatusUnauthorized, "/", msg+".")
		return
	}
	st, next, err := h.deps.Service.FinishProviderSignIn(r.Context(), sealed, q.Get("state"), q.Get("code"), clientAddr(r))
	var refusal *service.TokenRefusal
	var limited *a2a.Error
	switch {
	case errors.As(err, &limited) && limited.Kind == a2a.RateLimited:
		w.Header().Set("Retry-After", strconv.Itoa(a2a.RetryAfterSeconds(limited.RetryAfter)))
		h.renderLogin(w, r, v, http.StatusTooManyRequests, localPath(next),
			"Too many failed sign-ins from your address. Wait a minute and try again.")
		return
	case errors.Is(err, service.ErrSignInFlow):
		h.renderLogin(w, r, v, http.StatusBadRequest, "/", "This sign-in was not started in this browser, or took too long. Start it again.")
		return
	case errors.As(err, &refusal):
		h.renderLogin(w, r, v, http.StatusForbidden, localPath(next), refusal.Reason+".")
		return
	case err != nil:
		h.logError(w, "finish a sign-in at a provider", err)
		h.renderLogin(w, r, v, http.StatusBadGateway, localPath(next), "The sign-in at the provider did not complete: "+err.Error())
		return
	}
	if v.SessionID != "" {
		// Signing in again replaces the session this browser had.
		if err := h.deps.Service.SignOut(r.Context(), v.SessionID); err != nil {
			h.logError(w, "end the replaced web session", err)
		}
	}
	h.setCookie(w, sessionCookie, st.ID, "/", h.deps.Service.SessionTTL())
	w.Header().Set("Cache-Control", "private, no-store")
	http.Redirect(w, r, localPath(next), http.StatusSeeOther)
}
