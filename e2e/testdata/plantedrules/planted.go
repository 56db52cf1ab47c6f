// Package plantedrules is what TestStoresHoldNoRules must catch: rules
// written inline in a store, each planted here once. It is never built
// (testdata); the test type-checks it as it does the stores.
package plantedrules

import (
	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/tasks"
)

// recordAttempt holds "must be pending" inline, as store/push_outbox.go
// did.
func recordAttempt(d *push.Delivery, a push.Attempt) error {
	if d.State != push.Pending { // planted: a branch on a domain state
		return push.ErrNotPending // planted: a domain refusal
	}
	d.Apply(a)
	return nil
}

// moderate holds the moderation target's lookup inline.
func moderate(t moderation.Target, found bool) error {
	switch t.Kind {
	case moderation.KindReply: // planted: a case on a domain state
	}
	if !found {
		return &moderation.ItemNotFoundError{ID: t.ID} // planted: a domain refusal
	}
	return nil
}

// working holds which tasks a reply completes inline.
func working(t *tasks.Task) bool {
	return t.State == a2a.TaskStateWorking // planted: a branch on a task state
}

// notFound is what a read may answer: no violation.
func notFound() error { return tasks.ErrNotFound }
