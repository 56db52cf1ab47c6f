package store

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/store/internal/storedoc"
)

// signKeyKey is created (ms, 8) | key id: iteration order is age order.
func signKeyKey(k *signing.KeyRecord) []byte {
	return cat(u64(uint64(k.CreatedAt.UnixMilli())), []byte(k.ID))
}

// signKeys reads every key, newest first.
func signKeys(tx *bolt.Tx) ([]signing.KeyRecord, error) {
	var out []signing.KeyRecord
	cur := tx.Bucket(bucketSignKeys).Cursor()
	for k, v := cur.Last(); k != nil; k, v = cur.Prev() {
		r, err := storedoc.DecodeSignKey(v)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func hasCurrentKey(tx *bolt.Tx) (bool, error) {
	keys, err := signKeys(tx)
	if err != nil {
		return false, err
	}
	for _, k := range keys {
		if k.RetiredAt.IsZero() {
			return true, nil
		}
	}
	return false, nil
}

// SigningKeys implements signing.Store.
func (s *DB) SigningKeys(context.Context) ([]signing.KeyRecord, error) {
	var out []signing.KeyRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = signKeys(tx)
		return err
	})
	return out, err
}

// EnsureSigningKey implements signing.Store. With a current key it
// decides on a read and writes nothing.
func (s *DB) EnsureSigningKey(_ context.Context, k signing.KeyRecord) (bool, error) {
	var has bool
	if err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		has, err = hasCurrentKey(tx)
		return err
	}); err != nil || has {
		return false, err
	}
	if s.readOnly {
		return false, errReadOnly
	}
	v, err := storedoc.EncodeSignKey(&k)
	if err != nil {
		return false, err
	}
	var created bool
	err = s.update(func(tx *bolt.Tx) error {
		has, err := hasCurrentKey(tx)
		if err != nil || has {
			created = false
			return err
		}
		created = true
		return tx.Bucket(bucketSignKeys).Put(signKeyKey(&k), v)
	})
	return created, err
}

// RotateSigningKey implements signing.Store.
func (s *DB) RotateSigningKey(_ context.Context, k signing.KeyRecord, purgeBefore time.Time) error {
	v, err := storedoc.EncodeSignKey(&k)
	if err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		keys, err := signKeys(tx)
		if err != nil {
			return err
		}
		b := tx.Bucket(bucketSignKeys)
		for _, old := range keys {
			switch {
			case old.RetiredAt.IsZero():
				old.RetiredAt = k.CreatedAt
				ov, err := storedoc.EncodeSignKey(&old)
				if err != nil {
					return err
				}
				if err := b.Put(signKeyKey(&old), ov); err != nil {
					return err
				}
			case old.RetiredAt.Before(purgeBefore):
				if err := b.Delete(signKeyKey(&old)); err != nil {
					return err
				}
			}
		}
		return b.Put(signKeyKey(&k), v)
	})
}

// The stores of the push notifications and the signing keys.
var _ signing.Store = (*DB)(nil)
