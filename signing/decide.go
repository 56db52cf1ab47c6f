package signing

import "time"

// The keys' lifecycle, as pure decisions: a store loads every key under
// the signing keys' lock and writes what these return.

// DecideEnsure says whether k is stored: only when none of keys is
// current (two processes starting together make one current key).
func DecideEnsure(keys []KeyRecord) bool {
	for _, old := range keys {
		if old.RetiredAt.IsZero() {
			return false
		}
	}
	return true
}

// Rotation is what a rotation to a new key writes.
type Rotation struct {
	// Retire are the keys that were current, each with its old version
	// (as loaded), now retired at the new key's creation.
	Retire []Retired
	// Purge are the keys retired before the purge horizon: they leave the
	// database (and the JWKS).
	Purge []KeyRecord
	// Add is the new current key.
	Add KeyRecord
}

// Retired is a key before and after its retirement.
type Retired struct{ Old, New KeyRecord }

// DecideRotate decides the rotation to k: every current key of keys is
// retired at k.CreatedAt, every key retired before purgeBefore is
// purged, and k becomes the current key.
func DecideRotate(keys []KeyRecord, k KeyRecord, purgeBefore time.Time) Rotation {
	out := Rotation{Add: k}
	for _, old := range keys {
		switch {
		case old.RetiredAt.IsZero():
			retired := old
			retired.RetiredAt = k.CreatedAt
			out.Retire = append(out.Retire, Retired{Old: old, New: retired})
		case old.RetiredAt.Before(purgeBefore):
			out.Purge = append(out.Purge, old)
		}
	}
	return out
}
