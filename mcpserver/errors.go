package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// Outcomes of a tool call, as Deps.OnCall reports them.
const (
	OutcomeOK              = "ok"
	OutcomeInvalid         = "invalid"         // bad arguments (schema, query, cursor), or an unknown tool
	OutcomeNotFound        = "not_found"       // fetch of an id nothing has
	OutcomeRateLimited     = "rate_limited"    // the per-address search limit
	OutcomeUnauthenticated = "unauthenticated" // a configured token that does not work (stdio)
	OutcomeUnavailable     = "unavailable"     // the search index is not loaded yet
	OutcomeError           = "error"           // the server's fault
)

// Outcomes lists every outcome.
var Outcomes = []string{OutcomeOK, OutcomeInvalid, OutcomeNotFound, OutcomeRateLimited,
	OutcomeUnauthenticated, OutcomeUnavailable, OutcomeError}

// toolError is a tool execution error: the SDK answers it with isError and
// its message as the text, which the model reads.
type toolError struct {
	outcome string
	msg     string
}

func (e *toolError) Error() string { return e.msg }

func toolErrorf(outcome, format string, args ...any) *toolError {
	return &toolError{outcome: outcome, msg: fmt.Sprintf(format, args...)}
}

// fail turns an error of the service layer into what a tool answers: a
// tool error for the model to read, or, for a rate limit, a JSON-RPC
// error that Handler sends with HTTP 429 and Retry-After. Internal errors
// are logged with the request id and never shown.
func (t *tools) fail(ctx context.Context, err error) error {
	e := service.ToError(err)
	switch e.Kind {
	case a2a.RateLimited:
		secs := a2a.RetryAfterSeconds(e.RetryAfter)
		if st := stateOf(ctx); st != nil {
			st.limit(e.RetryAfter)
		}
		data, _ := json.Marshal(map[string]any{"reason": e.Kind.Reason, "retryAfterSeconds": secs})
		return &jsonrpc.Error{Code: int64(e.Kind.RPCCode), Message: fmt.Sprintf("%s; retry after %d s", e.Message, secs), Data: data}
	case a2a.InvalidParams:
		return toolErrorf(OutcomeInvalid, "%s", e.Message)
	case a2a.Unavailable:
		return toolErrorf(OutcomeUnavailable, "%s", e.Message)
	case a2a.Internal:
		t.d.Log.Error("mcp tool failed", "request_id", httpkit.RequestID(ctx), "err", err.Error())
		return toolErrorf(OutcomeError, "%s", e.Message)
	}
	return toolErrorf(OutcomeError, "%s", e.Message)
}

// outcomeOf classifies a finished tools/call.
func outcomeOf(res mcp.Result, err error) string {
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			switch we.Code {
			case int64(a2a.RateLimited.RPCCode):
				return OutcomeRateLimited
			case jsonrpc.CodeInvalidParams, jsonrpc.CodeInvalidRequest:
				return OutcomeInvalid
			}
		}
		return OutcomeError
	}
	r, ok := res.(*mcp.CallToolResult)
	if !ok || !r.IsError {
		return OutcomeOK
	}
	var te *toolError
	if errors.As(r.GetError(), &te) {
		return te.outcome
	}
	// A tool error that does not say what it is (none of kfa's handlers
	// makes one): count it with the refused arguments.
	return OutcomeInvalid
}

// requestState is what the HTTP layer and the tools share about one HTTP
// request: who calls, and whether a limit refused it (then the answer is
// HTTP 429 with Retry-After).
type requestState struct {
	caller service.Caller

	mu         sync.Mutex
	limited    bool
	retryAfter time.Duration
}

func (s *requestState) limit(d time.Duration) {
	s.mu.Lock()
	s.limited, s.retryAfter = true, d
	s.mu.Unlock()
}

func (s *requestState) limitedFor() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retryAfter, s.limited
}

type stateKey struct{}

func withState(ctx context.Context, s *requestState) context.Context {
	return context.WithValue(ctx, stateKey{}, s)
}

// stateOf returns the request's state, or nil outside HTTP (stdio). In
// the SDK's stateless mode a tool handler's context comes from the HTTP
// request's.
func stateOf(ctx context.Context) *requestState {
	s, _ := ctx.Value(stateKey{}).(*requestState)
	return s
}

// callerOf is who calls: the HTTP request's caller, or an anonymous one.
func callerOf(ctx context.Context) service.Caller {
	if s := stateOf(ctx); s != nil {
		return s.caller
	}
	return service.Caller{}
}
