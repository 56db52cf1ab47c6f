package postgres

// DestLockKeys are the two keys of dest's advisory lock, as pg_locks
// shows them (classid, objid), for tests that find its session.
func DestLockKeys(dest string) (classid, objid int64) {
	return int64(uint32(destLockClass)), int64(uint32(destLockKey(dest)))
}
