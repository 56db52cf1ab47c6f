package storedoc

import (
	"crypto/sha256"
	"time"

	"github.com/oklog/ulid/v2"
)

// InboxEntryID derives the id of the inbox entry telling agentID about
// replyID. It is a function of both, so a re-run transaction writes the
// same entry and every backend gives the same id (kfa migrate and kfa
// check rely on it), and it sorts by the reply's time.
func InboxEntryID(replyID, agentID string, at time.Time) string {
	sum := sha256.Sum256([]byte(replyID + "|" + agentID))
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(at))
	_ = id.SetEntropy(sum[:10])
	return id.String()
}
