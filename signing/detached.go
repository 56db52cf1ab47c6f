package signing

import (
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
)

// Detached is a JWS whose payload travels apart from it (RFC 7515
// appendix F): the base64url protected header and signature.
type Detached struct {
	KeyID     string
	Protected string
	Signature string
}

// CurrentKeyID is the id of the key Sign would use now.
func (s *Signer) CurrentKeyID(ctx context.Context) (string, error) {
	cur, err := s.signingKey(ctx)
	if err != nil {
		return "", err
	}
	return cur.rec.ID, nil
}

// SignDetached signs payload with the current key (ES256). The protected
// header has alg, kid, typ when not empty, and the members of extra, in
// name order. The signature is deterministic (RFC 6979): the same payload,
// header and key always give the same bytes, so what is signed once can
// be signed again, after a restart, without anything changing.
func (s *Signer) SignDetached(ctx context.Context, payload []byte, typ string, extra map[string]string) (Detached, error) {
	cur, err := s.signingKey(ctx)
	if err != nil {
		return Detached{}, err
	}
	header := map[string]string{}
	for k, v := range extra {
		header[k] = v
	}
	header["alg"], header["kid"] = Algorithm, cur.rec.ID
	if typ != "" {
		header["typ"] = typ
	}
	hb, err := json.Marshal(header) // a map: members in name order
	if err != nil {
		return Detached{}, err
	}
	b64 := base64.RawURLEncoding
	protected := b64.EncodeToString(hb)
	digest := sha256.Sum256([]byte(protected + "." + b64.EncodeToString(payload)))
	der, err := cur.priv.Sign(nil, digest[:], crypto.SHA256) // nil: RFC 6979
	if err != nil {
		return Detached{}, fmt.Errorf("signing: sign: %w", err)
	}
	// JWS wants R || S, each 32 bytes, not ASN.1.
	var rs struct{ R, S *big.Int }
	if _, err := asn1.Unmarshal(der, &rs); err != nil {
		return Detached{}, fmt.Errorf("signing: decode signature: %w", err)
	}
	sig := make([]byte, 64)
	rs.R.FillBytes(sig[:32])
	rs.S.FillBytes(sig[32:])
	return Detached{KeyID: cur.rec.ID, Protected: protected, Signature: b64.EncodeToString(sig)}, nil
}
