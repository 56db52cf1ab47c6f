package signing

import (
	"context"
	"fmt"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
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
	keys, err := s.current(ctx)
	if err != nil {
		return "", err
	}
	if len(keys) == 0 || !keys[0].rec.RetiredAt.IsZero() {
		return "", ErrNoKey
	}
	return keys[0].rec.ID, nil
}

// SignDetached signs payload with the current key. The protected header
// has alg (ES256), kid, typ when not empty, and the members of extra.
func (s *Signer) SignDetached(ctx context.Context, payload []byte, typ string, extra map[string]string) (Detached, error) {
	keys, err := s.current(ctx)
	if err != nil {
		return Detached{}, err
	}
	if len(keys) == 0 || !keys[0].rec.RetiredAt.IsZero() {
		return Detached{}, ErrNoKey
	}
	cur := keys[0]
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	for k, v := range extra {
		opts = opts.WithHeader(jose.HeaderKey(k), v)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: cur.priv, KeyID: cur.rec.ID}}, opts)
	if err != nil {
		return Detached{}, fmt.Errorf("signing: key %s: %w", cur.rec.ID, err)
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		return Detached{}, fmt.Errorf("signing: sign: %w", err)
	}
	compact, err := obj.DetachedCompactSerialize()
	if err != nil {
		return Detached{}, fmt.Errorf("signing: serialize: %w", err)
	}
	protected, sig, ok := strings.Cut(compact, "..")
	if !ok {
		return Detached{}, fmt.Errorf("signing: unexpected detached form %q", compact)
	}
	return Detached{KeyID: cur.rec.ID, Protected: protected, Signature: sig}, nil
}
