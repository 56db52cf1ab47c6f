package commands

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/storage"
)

// signingLock serializes the commands on signing keys (two processes
// starting together must not both make a current key).
const signingLock = "signing keys"

// maxSigningKeys bounds the keys a signing command loads: keys are
// purged a retention after their retirement, so a handful are stored.
const maxSigningKeys = 1000

// loadKeys queues the signing keys' lock and every key.
func loadKeys(l storage.Loader, keys *[]signing.KeyRecord) {
	l.Lock(signingLock)
	storage.Many(l, SigningKeys.Keys(), nil, maxSigningKeys, storage.Read, keys)
}

// EnsureSigningKey implements signing.Store: the keys under their lock,
// signing.DecideEnsure, the key.
func (c *Commands) EnsureSigningKey(ctx context.Context, key signing.KeyRecord) (bool, error) {
	var (
		keys    []signing.KeyRecord
		created bool
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdEnsureKey, Bookkeeping: true,
		Load: func(l storage.Loader) error { loadKeys(l, &keys); return nil },
		Decide: func() (*storage.Writes, error) {
			if created = signing.DecideEnsure(keys); !created {
				return nil, nil
			}
			w := &storage.Writes{}
			storage.Put(w, SigningKeys, nil, &key)
			return w, nil
		}})
	return created, err
}

// RotateSigningKey implements signing.Store: the keys under their lock,
// signing.DecideRotate, the retired keys, the purge and the new key.
func (c *Commands) RotateSigningKey(ctx context.Context, key signing.KeyRecord, purgeBefore time.Time) error {
	var keys []signing.KeyRecord
	return c.e.Run(ctx, storage.Command{Name: CmdRotateKey,
		Load: func(l storage.Loader) error { loadKeys(l, &keys); return nil },
		Decide: func() (*storage.Writes, error) {
			r := signing.DecideRotate(keys, key, purgeBefore)
			w := &storage.Writes{}
			for i := range r.Retire {
				storage.Put(w, SigningKeys, &r.Retire[i].Old, &r.Retire[i].New)
			}
			for i := range r.Purge {
				storage.Delete(w, SigningKeys, &r.Purge[i])
			}
			storage.Put(w, SigningKeys, nil, &r.Add)
			return w, nil
		}})
}
