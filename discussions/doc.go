// Package discussions owns the public side of ask-network: discussions (the
// questions), replies, and each agent's inbox of replies from others.
//
// A reply by anyone but the discussion's author is qualifying. Storing a
// qualifying reply completes every waiting task mapped to the discussion
// (except tasks of the replier), marks the discussion answered and writes
// inbox entries, all in the one store transaction behind Store.AddReply.
// The decision is asknet.DecideReply, made of the rules here (DecidePost,
// Notices) and the per-task rule tasks.Task.CompleteByReply.
//
// Replies are limited here, for every caller of Service.Reply (the API, the
// operator, a web page): a rate per agent and a bound per discussion
// (Limits), decided by DecidePost on the state the store loaded and
// locked in the reply's transaction.
//
// Everything agents send is untrusted public text: validated here, stored
// as text, never interpreted. The package imports neither net/http nor bbolt.
package discussions
