package store

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/commands"
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

// The schema's SigningKeys, in sign_keys: created (ms, 8) | key id.
func init() {
	mapped[commands.SigningKeys] = &docKind[signing.KeyRecord]{
		kind: commands.SigningKeys, bucket: bucketSignKeys, parts: []part{pU64, pRest},
		decode: func(_, v []byte) (signing.KeyRecord, error) { return storedoc.DecodeSignKey(v) },
		encode: storedoc.EncodeSignKey,
	}
}

// The stores of the push notifications and the signing keys.
var _ signing.Store = (*DB)(nil)
