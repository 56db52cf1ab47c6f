package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
)

// Follower counts the ask-network events from the change log: asks
// (task.created), replies by whether they qualify (discussion.replied),
// completions and cancels (task.moved), flags, hides and unhides
// (item.flagged, item.hidden, item.unhidden). Counted from the log, a number
// is exactly what committed, whoever made it (a binding, the operator,
// another process on the database): in a deployment of several processes,
// every process counts every event, so each one's counters are the whole
// deployment's (take one process's, or the max, never the sum). A process
// counts from its start: the events committed before it are not counted.
func (m *Metrics) Follower() changelog.Follower { return logCounter{m} }

type logCounter struct{ m *Metrics }

// Apply implements changelog.Follower.
func (c logCounter) Apply(_ context.Context, evs []changelog.Event) error {
	for _, e := range evs {
		switch e.Kind {
		case changelog.TaskCreated:
			c.m.asks.Inc()
		case changelog.DiscussionReplied:
			q := "false"
			if e.Note == changelog.NoteQualifying {
				q = "true"
			}
			c.m.replies.WithLabelValues(q).Inc()
		case changelog.ItemFlagged:
			c.m.flags.WithLabelValues(e.Note).Inc()
		case changelog.ItemHidden:
			c.m.hides.WithLabelValues(e.Note).Inc()
		case changelog.ItemUnhidden:
			c.m.unhides.Inc()
		case changelog.TaskMoved:
			switch a2a.TaskState(e.Ref) {
			case a2a.TaskStateCompleted:
				c.m.completions.Inc()
			case a2a.TaskStateCanceled:
				c.m.cancels.Inc()
			}
		}
	}
	return nil
}

// scrapeWait bounds how long a scrape waits for the counting follower.
const scrapeWait = time.Second

// SyncBeforeScrape makes each scrape first wait (at most a second) until
// sync returns: the follower that counts from the log has applied every
// event committed before the scrape, so a scrape right after a request
// counts it. Call it before serving.
func (m *Metrics) SyncBeforeScrape(sync func(ctx context.Context) error) { m.sync = sync }

// synced runs the scrape's sync, if any.
func (m *Metrics) synced(r *http.Request) {
	if m.sync == nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), scrapeWait)
	defer cancel()
	_ = m.sync(ctx) // a slow follower: the scrape shows what it has
}
