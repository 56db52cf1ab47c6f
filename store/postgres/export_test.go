package postgres

import "context"

// DestLockKeys are the two keys of dest's advisory lock, as pg_locks
// shows them (classid, objid), for tests that find its session.
func DestLockKeys(dest string) (classid, objid int64) {
	return int64(uint32(destLockClass)), int64(uint32(destLockKey(dest)))
}

// ConnTrips is the round trips the connection of a one-connection pool
// has made, counted or not by RoundTrips: a test sees every trip a read
// makes, including one that bypassed the counting.
func (s *DB) ConnTrips() uint64 {
	c, err := s.pool.Acquire(context.Background())
	if err != nil {
		return 0
	}
	defer c.Release()
	return connTrips(c)
}
