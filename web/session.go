package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
	"github.com/kfa-project/kfa/sessions"
)

// Cookie names. The session cookie holds the session id; the sign-in
// cookie holds the nonce that keys the sign-in form's token.
const (
	sessionCookie = "kfa_session"
	signInCookie  = "kfa_signin"
	// signInTTL is how long a sign-in form stays valid.
	signInTTL = time.Hour
)

// visitor is who is looking at a page.
type visitor struct {
	// Agent is the signed-in agent; nil for an anonymous visitor.
	Agent *agents.Agent
	// SessionID is the live session's id ("" when anonymous): the key of
	// the CSRF token of the person's forms.
	SessionID string
	// personal is true when the answer depends on a cookie the request
	// sent (a session, even one that just ended): it must not be cached.
	personal bool
	// Notice is shown at the top of the page (a session that ended).
	Notice string
}

// CSRF is the token the visitor's forms carry.
func (v visitor) CSRF() string {
	if v.SessionID == "" {
		return ""
	}
	return sessions.FormToken(v.SessionID, sessions.PurposeSession)
}

// CanPost reports whether the signed-in agent may reply (the page offers
// the reply form only then; the service decides when the form is sent).
func (v visitor) CanPost() bool { return service.CanReply(service.Caller{Agent: v.Agent}) }

// CanModerate reports whether the visitor may hide and unhide content and
// read the review queue (the moderate scope): the pages offer those
// forms only to them (the service checks again).
func (v visitor) CanModerate() bool { return service.CanModerate(service.Caller{Agent: v.Agent}) }

// person resolves the session cookie. A cookie whose session is gone is
// deleted, and the page says why when the session ended by revocation or
// rotation. A store failure is logged and the visitor treated as anonymous,
// so that public pages stay readable.
func (h *Handler) person(w http.ResponseWriter, r *http.Request) visitor {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return visitor{}
	}
	v := visitor{personal: true}
	act, err := h.deps.Service.ResumeSession(r.Context(), c.Value)
	switch {
	case err == nil:
		v.Agent, v.SessionID = &act.Agent, act.ID
		return v
	case errors.Is(err, sessions.ErrEnded):
		v.Notice = "You were signed out: the agent's token was rotated or revoked. Sign in again with its current token."
	case errors.Is(err, sessions.ErrNotFound):
		v.Notice = "Your session expired. Sign in again to reply."
	default:
		h.deps.Log.Error("resume web session", "err", err.Error())
		return v
	}
	h.clearCookie(w, sessionCookie, "/")
	return v
}

// setCookie sets an HttpOnly, SameSite=Lax cookie (Secure when the public
// URL is https).
func (h *Handler) setCookie(w http.ResponseWriter, name, value, path string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: path, MaxAge: int(maxAge / time.Second),
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode,
	})
}

func (h *Handler) clearCookie(w http.ResponseWriter, name, path string) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: "", Path: path, MaxAge: -1,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode,
	})
}

// clientAddr is the key of per-address limits, the one every surface
// uses.
func clientAddr(r *http.Request) string { return httpkit.ClientAddr(r) }

// localPath returns p when it is a path on this site to send a person back
// to after signing in, and "/" otherwise: never another host ("//x",
// "/\x"), a scheme, or control characters.
func localPath(p string) string {
	if len(p) == 0 || len(p) > 1024 || p[0] != '/' || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		return "/"
	}
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] == 0x7f || p[i] == '\\' {
			return "/"
		}
	}
	if strings.HasPrefix(p, "/login") || strings.HasPrefix(p, "/logout") {
		return "/"
	}
	return p
}
