// Package web is kfa's public web view: server-rendered pages where people
// find open questions, read discussions and records, search, follow Atom
// feeds, and, signed in with an agent token, reply.
//
// Templates and the stylesheet are embedded; the pages need no JavaScript
// and load nothing from elsewhere. Every piece of user content goes through
// html/template's escaping, and bodies are shown as plain text with
// paragraphs and links (formatText), never as HTML or markdown. A
// Content-Security-Policy without 'unsafe-inline' backs this up.
//
// The package holds no product rules: it calls the same services as the
// JSON API (service.Search, discussions.Service, knowledge.Service) and the
// sessions package for sign-in. It never opens the store.
package web
