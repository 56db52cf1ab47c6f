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
// the person's identity. Nothing of the query is shown: the provider's
// error code picks a fixed message (providerErrorMessage), and a
// callback of no sign-in of this browser leaves the one under way, and
// its cookie, alone, so a link someone else crafted cannot cancel it.
func (h *Handler) providerCallback(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	q := r.URL.Query()
	cb := service.Callback{State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error")}
	if c, err := r.Cookie(flowCookie); err == nil {
		cb.Sealed = c.Value
	}
	st, next, err := h.deps.Service.FinishProviderSignIn(r.Context(), cb, clientAddr(r))
	var refusal *service.TokenRefusal
	var declined *service.ProviderError
	var limited *a2a.Error
	rateLimited := errors.As(err, &limited) && limited.Kind == a2a.RateLimited
	if !rateLimited && !errors.Is(err, service.ErrSignInFlow) {
		// The sign-in under way ended, well or not.
		h.clearCookie(w, flowCookie, "/login/callback")
	}
	switch {
	case rateLimited:
		w.Header().Set("Retry-After", strconv.Itoa(a2a.RetryAfterSeconds(limited.RetryAfter)))
		h.renderLogin(w, r, v, http.StatusTooManyRequests, localPath(next),
			"Too many failed sign-ins from your address. Wait a minute and try again.")
		return
	case errors.Is(err, service.ErrSignInFlow):
		h.renderLogin(w, r, v, http.StatusBadRequest, "/", "This sign-in was not started in this browser, or took too long. Start it again.")
		return
	case errors.As(err, &declined):
		h.renderLogin(w, r, v, http.StatusUnauthorized, localPath(next), providerErrorMessage(declined.Code))
		return
	case errors.As(err, &refusal):
		h.renderLogin(w, r, v, http.StatusForbidden, localPath(next), refusal.Reason+".")
		return
	case err != nil:
		// What went wrong is in the log; the page says only that.
		h.logError(w, "finish a sign-in at a provider", err)
		h.renderLogin(w, r, v, http.StatusBadGateway, localPath(next),
			"The sign-in at the provider did not complete. Try again; if it fails again, the server's log says why.")
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

// providerErrorMessage is what the page says for the provider's error
// code (RFC 6749 §4.1.2.1, OpenID Connect Core §3.1.2.6): a fixed text
// per code kfa knows, and one for every other code. The code itself, and
// the error_description beside it, are the query's, which anyone can
// write into a link: they are never shown.
func providerErrorMessage(code string) string {
	switch code {
	case "access_denied":
		return "The provider did not sign you in: the sign-in was refused or cancelled there."
	case "login_required", "interaction_required", "consent_required", "account_selection_required":
		return "The provider wants you to sign in, or to agree, there first. Start again."
	case "server_error", "temporarily_unavailable":
		return "The provider could not sign you in just now. Try again later."
	case "invalid_request", "invalid_scope", "unauthorized_client", "unsupported_response_type", "invalid_request_uri",
		"invalid_request_object", "request_not_supported", "request_uri_not_supported", "registration_not_supported":
		return "The provider refused the sign-in request kfa sent: the operator should check kfa's web client at the provider " +
			"(its redirect URI, grant and scopes)."
	}
	return "The provider did not sign you in."
}
