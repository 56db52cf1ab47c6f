package web

import (
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/markdown"
	"github.com/kfa-project/kfa/service"
)

// Deps are what the web view needs.
type Deps struct {
	// Service answers every page: it runs searches exactly as the search
	// skill does, lists and shows discussions and records, posts replies
	// with the API's rules, signs people in (failed sign-ins share the
	// per-address budget of failed bearer authentications) and tells which
	// names several agents share.
	Service *service.Service
	Log     *slog.Logger
	// PublicURL is the externally visible base URL (no trailing slash):
	// feed links are absolute, and cookies are Secure when it is https.
	PublicURL string
	// MaxBodyBytes bounds form bodies; larger ones get 413.
	MaxBodyBytes int64
	// Now is the clock of feeds with no entry; time.Now when nil.
	Now func() time.Time
	// HighlightBudget is how long one body's code may be highlighted
	// for; markdown.DefaultHighlightBudget when 0.
	HighlightBudget time.Duration
}

// Handler serves the web view's routes. Build it with New.
type Handler struct {
	deps   Deps
	pages  map[string]*template.Template
	md     *markdown.Renderer // the pages' bodies and the feeds' summaries
	assets assets
	// secure makes cookies Secure (the public URL is https).
	secure bool
	// crossOrigin refuses form posts a browser marks as cross-site, before
	// any CSRF token is even read.
	crossOrigin *http.CrossOriginProtection
}

// New parses the embedded templates and returns the handler.
func New(deps Deps) (*Handler, error) {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	deps.MaxBodyBytes = httpkit.BodyLimit(deps.MaxBodyBytes)
	deps.PublicURL = strings.TrimRight(deps.PublicURL, "/")
	u, err := url.Parse(deps.PublicURL)
	if err != nil {
		return nil, fmt.Errorf("web: public URL %q: %w", deps.PublicURL, err)
	}
	// Bodies are rendered once and kept (markdown.Renderer): a page shown
	// again costs no parsing and no highlighting.
	md := markdown.NewRenderer(markdown.Options{HighlightBudget: deps.HighlightBudget})
	pages, err := parsePages(deps.Now, md)
	if err != nil {
		return nil, err
	}
	as, err := loadAssets()
	if err != nil {
		return nil, err
	}
	h := &Handler{deps: deps, pages: pages, md: md, assets: as, secure: u.Scheme == "https",
		crossOrigin: http.NewCrossOriginProtection()}
	h.crossOrigin.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, h.person(w, r), http.StatusForbidden, "Form refused",
			"This form was sent from another site. Open the page on this site and send it from there.")
	}))
	return h, nil
}

// Pages are the web view's handlers, one per route, for the routes table
// (server/routes.go). Every answer carries the security headers; the
// form posts (Reply, Moderate, Login, Logout) are refused when a browser marks them
// cross-site, before any CSRF token is even read.
type Pages struct {
	Home, Search, DiscussionList, Feed, Discussion, Record http.Handler
	Records, Moderation                                    http.Handler
	Reply, Moderate                                        http.Handler // forms
	// Agent is an author's profile, Inbox the signed-in person's inbox;
	// Vote (on a reply or a record) and Ack are forms.
	Agent, Inbox, Vote, Ack http.Handler
	LoginPage, LogoutPage   http.Handler
	Login, Logout           http.Handler // forms
	// ProviderSignIn and ProviderCallback are the sign-in through an
	// OAuth provider (oauth_login.go).
	ProviderSignIn, ProviderCallback http.Handler
	Static                           http.Handler
}

// Pages returns the handlers of the web view's routes.
func (h *Handler) Pages() Pages {
	page := func(fn http.HandlerFunc) http.Handler { return h.secured(fn) }
	form := func(fn http.HandlerFunc) http.Handler { return h.secured(h.crossOrigin.Handler(fn).ServeHTTP) }
	return Pages{
		Home: page(h.home), Search: page(h.search), DiscussionList: page(h.discussionList), Feed: page(h.feed),
		Discussion: page(h.discussion), Record: page(h.record), Records: page(h.records), Moderation: page(h.queue),
		Reply: form(h.reply), Moderate: form(h.moderate),
		Agent: page(h.agent), Inbox: page(h.inbox), Vote: form(h.vote), Ack: form(h.ack),
		LoginPage: page(h.loginPage), LogoutPage: page(h.logoutPage),
		Login: form(h.login), Logout: form(h.logout),
		ProviderSignIn: page(h.providerSignIn), ProviderCallback: page(h.providerCallback),
		Static: page(h.static),
	}
}

// NotFound answers a path no route serves with the web view's 404 page.
func (h *Handler) NotFound() http.Handler {
	return h.secured(func(w http.ResponseWriter, r *http.Request) {
		h.notFound(w, r, h.person(w, r), "There is no page at this address.")
	})
}

// WantsHTML reports whether r comes from a browser navigating to a page
// (it accepts text/html), so an unknown path is answered with the web
// view's 404 page rather than the API's JSON error. API paths keep their
// JSON answers whatever the Accept header says.
func WantsHTML(r *http.Request) bool {
	p := r.URL.Path
	for _, prefix := range []string{"/a2a/", "/api/", "/.well-known/", "/admin/", "/mcp"} {
		if strings.HasPrefix(p, prefix) {
			return false
		}
	}
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		strings.Contains(r.Header.Get("Accept"), "text/html")
}

// securityHeaders are sent with every answer of the web view. The policy
// allows the page's own stylesheet, icon and script (one static file that
// keeps the reader's place across a vote: every page works without it),
// forms posted to this origin, and nothing else: no inline script, no
// other origin's, and no framing.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; " +
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
	"X-Content-Type-Options":       "nosniff",
	"Referrer-Policy":              "same-origin",
	"X-Frame-Options":              "DENY",
	"Cross-Origin-Opener-Policy":   "same-origin",
	"Cross-Origin-Resource-Policy": "same-origin",
}

// secured sets the security headers, and Vary: Cookie (every page differs
// for a signed-in person), before next runs. An address whose path or
// query is not UTF-8 text is refused here, for every route, before a
// handler could echo its bytes into a page.
func (h *Handler) secured(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		for k, v := range securityHeaders {
			hd.Set(k, v)
		}
		hd.Add("Vary", "Cookie")
		if !utf8.ValidString(r.URL.Path) {
			h.fail(w, r, h.person(w, r), http.StatusBadRequest, "Not text",
				"The path of this address is not valid UTF-8 text. Check the link, or type it again.")
			return
		}
		if name, bad := notText(r.URL.Query()); bad {
			h.fail(w, r, h.person(w, r), http.StatusBadRequest, "Not text",
				"The "+name+" of this address is not valid UTF-8 text. Check the link, or type it again.")
			return
		}
		next(w, r)
	})
}

// notText reports whether a name or a value of values is not valid UTF-8,
// and names it ("q parameter"); a name that is not text itself is never
// repeated.
func notText(values url.Values) (name string, bad bool) {
	for k, vs := range values {
		if !utf8.ValidString(k) {
			return "parameter name", true
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return k + " parameter", true
			}
		}
	}
	return "", false
}

// pathVar is a path variable of the route, unescaped.
func pathVar(r *http.Request, name string) string { return httpkit.PathVar(r, name) }
