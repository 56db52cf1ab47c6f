package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/markdown"
	"github.com/kfa-project/kfa/service"
)

//go:embed templates/*.html
var templateFiles embed.FS

// pageNames are the templates in templates/, each rendered inside
// layout.html.
var pageNames = []string{"home", "search", "discussions", "discussion", "record", "records", "moderation", "login", "logout", "error",
	"agent", "inbox"}

// Cache lifetimes of public pages. A signed-in person's pages are never
// cached (private, no-store).
const (
	pageMaxAge = 30 * time.Second
	feedMaxAge = 5 * time.Minute
)

// funcs are the templates' functions; now is the clock relative times
// are told from, md renders bodies.
func funcs(now func() time.Time, md *markdown.Renderer) template.FuncMap {
	return template.FuncMap{
		"text":     formatText,
		"markdown": md.HTML,
		// title is a question's or record's title, its code spans as code.
		"title": formatTitle,
		// when is a <time> element: how long ago, the exact time on hover.
		"when":   func(t time.Time) template.HTML { return timeElement(t, now()) },
		"iso":    isoTime,
		"plural": plural,
		// disclist pairs a list of discussions with the names to show their
		// authors by (template "disclist").
		"disclist": newDiscList,
		// modform is a moderator's form on one item (template "modform").
		"modform": newModForm,
		// int narrows a count to an int (for plural).
		"int": func(n int64) int { return int(n) },
	}
}

func parsePages(now func() time.Time, md *markdown.Renderer) (map[string]*template.Template, error) {
	out := make(map[string]*template.Template, len(pageNames))
	fm := funcs(now, md)
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(fm).ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: parse template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// pageData is what the layout renders; Content is the page's own data.
type pageData struct {
	Title   string
	Section string // the navigation entry that is the current page
	Visitor visitor
	// Here is this page's path and query: where signing in comes back to.
	Here    string
	Assets  assets
	Content any
	// Unread counts a signed-in person's unread inbox entries (More: more
	// than service.UnreadScan).
	Unread unread
}

// unread is the header's count of unread inbox entries.
type unread struct {
	N    int
	More bool
}

// Label is the count as the header shows it: "3", "99+".
func (u unread) Label() string {
	if u.More {
		return strconv.Itoa(u.N) + "+"
	}
	return strconv.Itoa(u.N)
}

// page is one answer to render.
type page struct {
	name    string // template
	status  int
	title   string
	section string
	content any
	// maxAge lets shared caches keep an anonymous visitor's answer; zero
	// means no-store.
	maxAge time.Duration
}

// render writes p. Pages that depend on a cookie, and pages with no
// max-age, are private and not stored.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, v visitor, p page) {
	d := pageData{Title: p.title, Section: p.section, Visitor: v, Here: r.URL.RequestURI(), Assets: h.assets, Content: p.content}
	if v.Agent != nil {
		// A failed count costs the header its number only.
		n, more, err := h.deps.Service.Unread(r.Context(), service.Caller{Agent: v.Agent})
		if err != nil {
			h.logError(w, "count unread inbox entries", err)
		}
		d.Unread = unread{N: n, More: more}
	}
	var buf bytes.Buffer
	if err := h.pages[p.name].ExecuteTemplate(&buf, "layout", d); err != nil {
		h.logError(w, "render page", err)
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Length", strconv.Itoa(buf.Len()))
	setCache(w, v, p.maxAge)
	w.WriteHeader(p.status)
	_, _ = w.Write(buf.Bytes())
}

func setCache(w http.ResponseWriter, v visitor, maxAge time.Duration) {
	if v.personal || maxAge <= 0 {
		w.Header().Set("Cache-Control", "private, no-store")
		return
	}
	w.Header().Set("Cache-Control", "public, max-age="+strconv.Itoa(int(maxAge/time.Second)))
}

// errorContent is the error page's data.
type errorContent struct {
	Status  int
	Heading string
	Message string
	// SignIn offers the sign-in link (the error is about being signed out).
	SignIn bool
}

// fail renders the error page.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, v visitor, status int, heading, msg string) {
	h.render(w, r, v, page{name: "error", status: status, title: heading,
		content: errorContent{Status: status, Heading: heading, Message: msg, SignIn: status == http.StatusUnauthorized}})
}

// notFound renders the 404 page, which anonymous visitors' caches may keep
// briefly.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request, v visitor, msg string) {
	h.render(w, r, v, page{name: "error", status: http.StatusNotFound, title: "Not found", maxAge: pageMaxAge,
		content: errorContent{Status: http.StatusNotFound, Heading: "Page not found", Message: msg}})
}

// failErr renders the error page for err, with the status and message the
// API would give it (service.ToError), and Retry-After when it is a limit.
func (h *Handler) failErr(w http.ResponseWriter, r *http.Request, v visitor, err error) {
	e := service.ToError(err)
	status := e.Kind.HTTPStatus
	heading := http.StatusText(status)
	switch e.Kind {
	case a2a.RateLimited:
		w.Header().Set("Retry-After", strconv.Itoa(a2a.RetryAfterSeconds(e.RetryAfter)))
		heading = "Slow down"
	case a2a.InvalidParams:
		heading = "That did not work"
	}
	if status >= 500 {
		h.logError(w, "web request failed", err)
	}
	h.fail(w, r, v, status, heading, e.Message)
}

// logError logs err with the request id the outer middleware gave the
// answer.
func (h *Handler) logError(w http.ResponseWriter, msg string, err error) {
	h.deps.Log.Error(msg, "request_id", w.Header().Get("X-Request-Id"), "err", err.Error())
}

// displayTime is the exact form of a timestamp: UTC, to the minute.
func displayTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2 Jan 2006, 15:04 UTC")
}

// timeElement shows t as how long before now it was, in a <time> element
// that holds the exact time for machines (datetime) and people (title,
// shown on hover).
func timeElement(t, now time.Time) template.HTML {
	if t.IsZero() {
		return ""
	}
	return template.HTML(`<time datetime="` + isoTime(t) + `" title="` + displayTime(t) + `">` +
		template.HTMLEscapeString(relativeTime(t, now)) + `</time>`)
}

// relativeTime is how long before now t was, in words: "just now",
// "5 min ago", "3 h ago", "yesterday", "4 days ago", "2 months ago",
// "3 years ago". A time after now (another process's clock) is "just
// now" within a minute, its date beyond.
func relativeTime(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < -time.Minute:
		return "on " + t.UTC().Format("2 Jan 2006")
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	case d < 48*time.Hour:
		return "yesterday"
	case d < 30*24*time.Hour:
		return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
	case d < 365*24*time.Hour:
		n := int(d / (30 * 24 * time.Hour))
		return fmt.Sprintf("%d %s ago", n, plural(n, "month", "months"))
	}
	n := int(d / (365 * 24 * time.Hour))
	return fmt.Sprintf("%d %s ago", n, plural(n, "year", "years"))
}

// isoTime is a timestamp for datetime attributes and feeds.
func isoTime(t time.Time) string { return a2a.FormatTime(t) }

// plural picks the singular or plural word for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
