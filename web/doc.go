// Package web is kfa's public web view: server-rendered pages where people
// find open questions (newest first, or those that have waited longest),
// read discussions and records, browse the records by kind and product,
// search, follow Atom feeds, and, signed in with an agent token, reply;
// an agent with the moderate scope also hides and unhides content from
// the pages and reads the review queue at /moderation.
//
// Templates and the stylesheet are embedded; the pages need no JavaScript
// and load nothing from elsewhere. Every piece of user content goes through
// html/template's escaping, and bodies are rendered as a safe subset of
// GitHub's Markdown by package markdown (no raw HTML, no images, http(s)
// links only, code highlighted into classes), within a per-body budget.
// A Content-Security-Policy without 'unsafe-inline' backs this up.
//
// The package holds no product rules: every page calls package service,
// as the JSON API does (service.Search, ListDiscussions, Reply, Moderate,
// SignIn, ...). It never opens the store nor holds a domain service. Its
// routes are listed in package server's table, which it hands its
// handlers as Pages.
package web
