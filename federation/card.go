package federation

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"

	"github.com/go-jose/go-jose/v4"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/jcs"
	"github.com/kfa-project/kfa/peers"
)

// cardPath and jwksPath are where a kfa serves its card and the keys
// that verify its signatures.
const (
	cardPath = "/.well-known/agent-card.json"
	jwksPath = "/.well-known/jwks.json"
	// maxCardBytes bounds a card (and a key set).
	maxCardBytes = 256 << 10
)

// ReadCard fetches the peer's agent card and, when it is signed,
// verifies its signature with the peer's key of that id (from the
// peer's own JWKS, never a URL the card names) and returns that key's
// thumbprint to pin. A signed card that does not verify is an error.
func (c *Client) ReadCard(ctx context.Context) (peers.Card, error) {
	var raw json.RawMessage
	if err := c.call(ctx, http.MethodGet, cardPath, nil, nil, false, maxCardBytes, &raw); err != nil {
		return peers.Card{}, fmt.Errorf("read the agent card: %w", err)
	}
	var card a2a.AgentCard
	if err := json.Unmarshal(raw, &card); err != nil {
		return peers.Card{}, fmt.Errorf("read the agent card: %w", err)
	}
	out := peers.Card{Name: card.Name}
	for _, in := range card.SupportedInterfaces {
		if in.ProtocolBinding == a2a.BindingHTTPJSON {
			out.A2AURL = in.URL
			break
		}
	}
	if len(card.Signatures) == 0 {
		return out, nil
	}
	kid, thumb, err := c.verifyCard(ctx, raw, card.Signatures[0])
	if err != nil {
		return peers.Card{}, fmt.Errorf("the agent card's signature: %w", err)
	}
	out.KeyID, out.Key = kid, thumb
	return out, nil
}

// CheckPinned reads the peer's card again and refuses it when it is not
// signed by the key pinned in p (peers.ErrCardKey); a peer added with an
// unsigned card has nothing pinned.
func (c *Client) CheckPinned(ctx context.Context, p peers.Peer) error {
	if p.Key == "" {
		return nil
	}
	card, err := c.ReadCard(ctx)
	if err != nil {
		return err
	}
	if card.Key != p.Key {
		return peers.ErrCardKey
	}
	return nil
}

// verifyCard verifies sig over the card raw (its canonical JSON without
// signatures) and returns the key's id and thumbprint.
func (c *Client) verifyCard(ctx context.Context, raw []byte, sig a2a.AgentCardSignature) (string, string, error) {
	b64 := base64.RawURLEncoding
	hb, err := b64.DecodeString(sig.Protected)
	if err != nil {
		return "", "", errors.New("the protected header is not base64url")
	}
	var header struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(hb, &header); err != nil || header.Kid == "" {
		return "", "", errors.New("the protected header names no key")
	}
	if header.Alg != "ES256" {
		return "", "", fmt.Errorf("algorithm %q, want ES256", header.Alg)
	}
	var set jose.JSONWebKeySet
	if err := c.call(ctx, http.MethodGet, jwksPath, nil, nil, false, maxCardBytes, &set); err != nil {
		return "", "", fmt.Errorf("read the peer's keys: %w", err)
	}
	keys := set.Key(header.Kid)
	if len(keys) != 1 {
		return "", "", fmt.Errorf("the peer's keys have no single key %q", header.Kid)
	}
	pub, ok := keys[0].Key.(*ecdsa.PublicKey)
	if !ok {
		return "", "", fmt.Errorf("key %q is not an ECDSA public key", header.Kid)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", "", err
	}
	delete(m, "signatures")
	unsigned, err := json.Marshal(m)
	if err != nil {
		return "", "", err
	}
	payload, err := jcs.Canonicalize(unsigned)
	if err != nil {
		return "", "", err
	}
	sb, err := b64.DecodeString(sig.Signature)
	if err != nil || len(sb) != 64 {
		return "", "", errors.New("the signature is not 64 bytes of base64url")
	}
	digest := sha256.Sum256([]byte(sig.Protected + "." + b64.EncodeToString(payload)))
	r, s := new(big.Int).SetBytes(sb[:32]), new(big.Int).SetBytes(sb[32:])
	if !ecdsa.Verify(pub, digest[:], r, s) {
		return "", "", errors.New("it does not verify with the peer's key")
	}
	tp, err := keys[0].Thumbprint(crypto.SHA256)
	if err != nil {
		return "", "", err
	}
	return header.Kid, b64.EncodeToString(tp), nil
}

// Cards reads peers' cards for the domain (peers.CardReader): the
// network half of adding a peer.
type Cards struct {
	// HTTP is the client; nil: NewHTTPClient.
	HTTP *http.Client
}

// ReadCard implements peers.CardReader.
func (c Cards) ReadCard(ctx context.Context, url, token string) (peers.Card, error) {
	return NewClient(url, token, c.HTTP).ReadCard(ctx)
}
