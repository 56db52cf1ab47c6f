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

// OpenConns opens n connections of the pool at once and returns them to
// it, so that the pool holds n idle ones; it then says how many the pool
// holds.
func (s *DB) OpenConns(ctx context.Context, n int) (int, error) {
	var held []interface{ Release() }
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	for range n {
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			return 0, err
		}
		held = append(held, c)
	}
	return int(s.pool.Stat().TotalConns()), nil
}
