package server

import (
	"github.com/kfa-project/kfa/store/postgres"
)

// watchReplication says, at start and whenever it changes, what the
// PostgreSQL primary's standbys promise: a warning when a failover could
// lose what kfa acknowledged (only asynchronous standbys, or commits that
// do not wait for the synchronous one), and, under --require-sync-replica,
// that writes are refused until a synchronous standby is back. A primary
// without standbys is not worth a warning unless the flag asks for one.
func (s *Server) watchReplication(db *postgres.DB) {
	say := func(r postgres.Replication, start bool) {
		switch {
		case r.Safe():
			if !start {
				s.log.Info("a synchronous standby is back: an acknowledged write survives a failover", "standbys", r.Standbys, "synchronous", r.Sync)
			}
		case r.Err != nil:
			// The database does not answer: /readyz and the requests say so.
		case s.cfg.RequireSyncReplica:
			s.log.Warn("writes refused (--require-sync-replica) until the primary has a synchronous standby", "reason", r.Why())
		case r.Standbys > 0 || r.Hidden > 0 || !start:
			s.log.Warn("a failover may lose writes kfa acknowledged", "reason", r.Why())
		}
	}
	say(db.Replication(), true)
	db.OnReplicationChange(func(_, now postgres.Replication) { say(now, false) })
}
