package postgres

import (
	"github.com/kfa-project/kfa/discussions"
)

// Totals across owners. No row written by every write holds them: one
// such row would make every write of every process wait on it. An
// owner's task totals are its counters (counters.go). The public
// discussion totals (ListDiscussions' totalSize) are exact, as on
// bbolt: the rows of discussion_totals, kept by triggers in the
// transaction of each write that moves a discussion between statuses or
// in or out of sight, sharded by connection so that concurrent writers
// update different rows, and summed by the read, in the statement of its
// page (migrations/0010_discussion_totals.sql). The operator's totals
// (the agent list, the task list across owners, kfa stats) are counted,
// on demand.

// discussionTotal is a query of the number of discussions readers see of
// status, whose parameter is $n ("": of every status, no parameter).
func discussionTotal(status discussions.Status, n string) string {
	if status == "" {
		return "SELECT COALESCE(sum(n), 0)::bigint FROM discussion_totals"
	}
	return "SELECT COALESCE(sum(n), 0)::bigint FROM discussion_totals WHERE status = " + n
}
