package postgres

import "time"

// Times the store keeps as Unix milliseconds, as the bbolt store does.

func fromMS(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
