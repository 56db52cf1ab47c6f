package storedoc

import (
	"encoding/json"
	"fmt"

	"github.com/kfa-project/kfa/signing"
)

type signKey struct {
	ID        string `json:"id"`
	Algorithm string `json:"alg"`
	Private   []byte `json:"priv"` // PKCS #8 DER
	CreatedAt int64  `json:"created"`
	RetiredAt int64  `json:"retired,omitempty"`
}

// EncodeSignKey is k's stored document.
func EncodeSignKey(k *signing.KeyRecord) ([]byte, error) {
	return json.Marshal(signKey{ID: k.ID, Algorithm: k.Algorithm, Private: k.Private,
		CreatedAt: k.CreatedAt.UnixMilli(), RetiredAt: MSOrZero(k.RetiredAt)})
}

// DecodeSignKey reads a document EncodeSignKey wrote.
func DecodeSignKey(v []byte) (signing.KeyRecord, error) {
	var r signKey
	if err := json.Unmarshal(v, &r); err != nil {
		return signing.KeyRecord{}, fmt.Errorf("decode signing key: %w", err)
	}
	return signing.KeyRecord{ID: r.ID, Algorithm: r.Algorithm, Private: r.Private,
		CreatedAt: FromMS(r.CreatedAt), RetiredAt: TimeOrZero(r.RetiredAt)}, nil
}
