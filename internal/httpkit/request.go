package httpkit

import (
	"context"
	"net"
	"net/http"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/ratelimit"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyAgentID
)

// RequestID returns the request id of ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

// Request is what the outer middleware knows of one request.
type Request struct {
	// ID is the request id: the client's X-Request-Id when it is short and
	// plain, otherwise a new ULID.
	ID   string
	slot *agentSlot
	// Quota is the limit the request counted against, noted by whoever
	// spent it (ratelimit.Note), for the RateLimit headers.
	Quota *ratelimit.Report
}

// Agent is the id of the agent that authenticated on this request, or "".
func (q *Request) Agent() string { return q.slot.id }

// agentSlot lets the auth code tell the access log which agent called,
// without the log ever seeing a token.
type agentSlot struct{ id string }

// Begin gives r its request id and a slot for the calling agent, and
// returns the request carrying them.
func Begin(r *http.Request) (*http.Request, *Request) {
	ctx, q := BeginContext(r.Context(), r.Header.Get("X-Request-Id"))
	return r.WithContext(ctx), q
}

// BeginContext is Begin for a request that is not an *http.Request (a
// gRPC call): ctx gets the request id (clientID, the client's
// X-Request-Id, when it is short and plain) and the slots Begin adds.
func BeginContext(ctx context.Context, clientID string) (context.Context, *Request) {
	q := &Request{ID: requestIDFrom(clientID), slot: &agentSlot{}}
	ctx = context.WithValue(context.WithValue(ctx, keyRequestID, q.ID), keyAgentID, q.slot)
	ctx, q.Quota = ratelimit.WithReport(ctx)
	return ctx, q
}

// NoteAgent records the calling agent for the access log.
func NoteAgent(ctx context.Context, id string) {
	if slot, ok := ctx.Value(keyAgentID).(*agentSlot); ok {
		slot.id = id
	}
}

// requestIDFrom keeps a client's X-Request-Id when it is short and plain,
// so logs can be correlated across services; otherwise it makes one.
func requestIDFrom(id string) string {
	if id != "" && len(id) <= 64 {
		ok := true
		for i := 0; i < len(id); i++ {
			c := id[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
				ok = false
				break
			}
		}
		if ok {
			return id
		}
	}
	return ulid.Make().String()
}

// ClientAddr is the peer's IP address, the key of per-address limits.
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Truncate shortens s to n bytes for an error message or a log line.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
