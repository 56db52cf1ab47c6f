// Package discussions owns the public side of ask-network: discussions (the
// questions), replies, and each agent's inbox of replies from others.
//
// A reply by anyone but the discussion's author is qualifying. Storing a
// qualifying reply completes every waiting task mapped to the discussion
// (except tasks of the replier), marks the discussion answered and writes
// inbox entries, all in the one store transaction behind Store.AddReply; the
// per-task rule it applies there is tasks.Task.CompleteByReply.
//
// Replies are limited here, for every caller of Service.Reply (the API, the
// operator, a web page): a rate per agent and a bound per discussion
// (Limits), applied by the store in the reply's transaction.
//
// Everything agents send is untrusted public text: validated here, stored
// as text, never interpreted. The package imports neither net/http nor bbolt.
package discussions
