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
// The package holds no product rules: every page calls package service,
// as the JSON API does (service.Search, ListDiscussions, Reply, SignIn,
// ...). It never opens the store nor holds a domain service. Its routes
// are listed in package server's table, which it hands its handlers as
// Pages.
package web
