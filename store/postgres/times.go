package postgres

import "time"

// Times the store keeps as Unix milliseconds, as the bbolt store does.

func fromMS(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func timeOrZero(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return fromMS(ms)
}
