package oauth

import (
	"fmt"
	"strings"
)

// An access token says it is one: its typ header is at+jwt (RFC 9068 §4).
// kfa checks the type because a provider signs its ID tokens, and often
// other JWTs, with the same keys as its access tokens: without the type,
// an ID token whose audience happens to be kfa's (a web client's id
// given to --oauth-audience, say) would pass for an access token (RFC
// 8725 §3.11, explicit typing). The type is a media type: compared
// without case, its "application/" prefix optional (RFC 7515 §4.1.9).

// TypAccessToken is the type of an access token, as kfa compares it.
const TypAccessToken = "at+jwt"

// mediaType is typ as compared: in lower case, without the
// "application/" prefix a media type with no other slash may omit.
func mediaType(typ string) string {
	t := strings.ToLower(typ)
	if rest, ok := strings.CutPrefix(t, "application/"); ok && !strings.Contains(rest, "/") {
		return rest
	}
	return t
}

// checkType decides a token's typ header. at+jwt is an access token.
// Untyped, or typed JWT (a generic JWT), is refused unless plain: the
// issuer cannot type its access tokens, and the operator said to accept
// them as they come. Any other type (id_token+jwt, logout+jwt, ...) says
// the token is something else, and is refused whatever plain says.
func checkType(typ string, plain bool, issuer string) error {
	t := mediaType(typ)
	if t == TypAccessToken {
		return nil
	}
	head := fmt.Sprintf("the token is typed %s, not as an access token (at+jwt, RFC 9068)", quoteShort(typ))
	if typ == "" {
		head = "the token has no type (typ), so it is not an access token (at+jwt, RFC 9068)"
	}
	if t != "" && t != "jwt" {
		return refusef("%s; kfa accepts access tokens only", head)
	}
	if plain {
		return nil
	}
	return refusef("%s, and kfa does not take a JWT of another kind (an ID token, say) for one: have the provider "+
		"type its access tokens at+jwt, or, if it cannot, start kfa with --oauth-plain-jwt-issuer %s", head, issuer)
}

// quoteShort quotes s for a refusal, cut to 64 bytes: a header's value
// is the caller's, and a refusal repeats it.
func quoteShort(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q...", s[:64])
	}
	return fmt.Sprintf("%q", s)
}
