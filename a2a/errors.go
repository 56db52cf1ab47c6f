package a2a

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrorDomain is the ErrorInfo domain of every error kfa returns.
const ErrorDomain = "a2a-protocol.org"

// Kind is one error of the A2A error table: how it is named, coded and
// carried by each binding. Kinds are comparable values.
type Kind struct {
	Name       string // spec name, e.g. "TaskNotFoundError"
	Reason     string // ErrorInfo reason, e.g. "TASK_NOT_FOUND"
	RPCCode    int    // JSON-RPC error code
	HTTPStatus int    // HTTP+JSON status code
	Status     string // google.rpc.Code name carried in the HTTP+JSON body
}

// The A2A errors (v1.0.1 table), the standard JSON-RPC errors, and the
// generic errors every binding needs. The auth and rate-limit codes follow
// the official Go SDK (-31401, -31403) where the spec leaves them open.
var (
	TaskNotFound              = Kind{"TaskNotFoundError", "TASK_NOT_FOUND", -32001, 404, "NOT_FOUND"}
	TaskNotCancelable         = Kind{"TaskNotCancelableError", "TASK_NOT_CANCELABLE", -32002, 400, "FAILED_PRECONDITION"}
	PushNotificationNotSupp   = Kind{"PushNotificationNotSupportedError", "PUSH_NOTIFICATION_NOT_SUPPORTED", -32003, 400, "FAILED_PRECONDITION"}
	UnsupportedOperation      = Kind{"UnsupportedOperationError", "UNSUPPORTED_OPERATION", -32004, 400, "FAILED_PRECONDITION"}
	ContentTypeNotSupported   = Kind{"ContentTypeNotSupportedError", "CONTENT_TYPE_NOT_SUPPORTED", -32005, 400, "INVALID_ARGUMENT"}
	InvalidAgentResponse      = Kind{"InvalidAgentResponseError", "INVALID_AGENT_RESPONSE", -32006, 500, "INTERNAL"}
	ExtendedCardNotConfigured = Kind{"ExtendedAgentCardNotConfiguredError", "EXTENDED_AGENT_CARD_NOT_CONFIGURED", -32007, 400, "FAILED_PRECONDITION"}
	ExtensionSupportRequired  = Kind{"ExtensionSupportRequiredError", "EXTENSION_SUPPORT_REQUIRED", -32008, 400, "FAILED_PRECONDITION"}
	VersionNotSupported       = Kind{"VersionNotSupportedError", "VERSION_NOT_SUPPORTED", -32009, 400, "FAILED_PRECONDITION"}

	ParseError     = Kind{"JSONParseError", "PARSE_ERROR", -32700, 400, "INVALID_ARGUMENT"}
	InvalidRequest = Kind{"InvalidRequestError", "INVALID_REQUEST", -32600, 400, "INVALID_ARGUMENT"}
	MethodNotFound = Kind{"MethodNotFoundError", "METHOD_NOT_FOUND", -32601, 404, "NOT_FOUND"}
	InvalidParams  = Kind{"InvalidParamsError", "INVALID_PARAMS", -32602, 400, "INVALID_ARGUMENT"}
	Internal       = Kind{"InternalError", "INTERNAL", -32603, 500, "INTERNAL"}

	Unauthenticated  = Kind{"UnauthenticatedError", "UNAUTHENTICATED", -31401, 401, "UNAUTHENTICATED"}
	PermissionDenied = Kind{"PermissionDeniedError", "INSUFFICIENT_SCOPE", -31403, 403, "PERMISSION_DENIED"}
	// OwnContent and NotAsker are 403s that no scope would lift, so they
	// carry reasons of their own (and no insufficient_scope challenge):
	// flagging one's own discussion or reply, accepting on another's.
	OwnContent       = Kind{"PermissionDeniedError", "OWN_CONTENT", -31403, 403, "PERMISSION_DENIED"}
	NotAsker         = Kind{"PermissionDeniedError", "NOT_ASKER", -31403, 403, "PERMISSION_DENIED"}
	RateLimited      = Kind{"RateLimitedError", "RATE_LIMITED", -31429, 429, "RESOURCE_EXHAUSTED"}
	NotFound         = Kind{"NotFoundError", "NOT_FOUND", -32601, 404, "NOT_FOUND"}
	MethodNotAllowed = Kind{"MethodNotAllowedError", "METHOD_NOT_ALLOWED", -32601, 405, "UNIMPLEMENTED"}
	PayloadTooLarge  = Kind{"PayloadTooLargeError", "PAYLOAD_TOO_LARGE", -32600, 413, "INVALID_ARGUMENT"}
	Unavailable      = Kind{"UnavailableError", "UNAVAILABLE", -32603, 503, "UNAVAILABLE"}
	// CursorExpired is a change feed cursor the feed can no longer resume
	// from (410 Gone): the reader starts again from the beginning.
	CursorExpired = Kind{"CursorExpiredError", "CURSOR_EXPIRED", -32602, 410, "FAILED_PRECONDITION"}
)

// FieldViolation names one bad field of a request (google.rpc.BadRequest).
type FieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}

// Error is an A2A error ready for any binding. Message is shown to the
// client; it never contains secrets.
type Error struct {
	Kind       Kind
	Message    string
	Metadata   map[string]string // ErrorInfo metadata
	Violations []FieldViolation  // google.rpc.BadRequest, for InvalidParams
	RetryAfter time.Duration     // for RateLimited: when to try again
	Data       any               // extra JSON-RPC data entry, e.g. the skills list
	// NoCredential marks an Unauthenticated error of a request that sent
	// no credential at all. Its challenge then carries no error attribute
	// (RFC 6750 §3.1): a client reads it as "authenticate", where
	// error="invalid_token" says "the token you sent does not work".
	NoCredential bool
}

// Errorf returns an Error of kind k with a formatted message.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// MissingCredential returns the Unauthenticated error of a request that
// sent no credential where one is needed.
func MissingCredential(format string, args ...any) *Error {
	return &Error{Kind: Unauthenticated, Message: fmt.Sprintf(format, args...), NoCredential: true}
}

// BadParam returns an InvalidParams error naming one field.
func BadParam(field, format string, args ...any) *Error {
	desc := fmt.Sprintf(format, args...)
	return &Error{
		Kind:       InvalidParams,
		Message:    field + ": " + desc,
		Violations: []FieldViolation{{Field: field, Description: desc}},
	}
}

func (e *Error) Error() string { return e.Kind.Name + ": " + e.Message }

// With adds one ErrorInfo metadata entry and returns e.
func (e *Error) With(key, value string) *Error {
	if e.Metadata == nil {
		e.Metadata = make(map[string]string, 2)
	}
	e.Metadata[key] = value
	return e
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ErrorInfo is the google.rpc.ErrorInfo detail.
type ErrorInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// BadRequest is the google.rpc.BadRequest detail.
type BadRequest struct {
	Type            string           `json:"@type"`
	FieldViolations []FieldViolation `json:"fieldViolations"`
}

// RetryInfo is the google.rpc.RetryInfo detail (retryDelay as "5s").
type RetryInfo struct {
	Type       string `json:"@type"`
	RetryDelay string `json:"retryDelay"`
}

// The @type URLs of the details.
const (
	TypeErrorInfo  = "type.googleapis.com/google.rpc.ErrorInfo"
	TypeBadRequest = "type.googleapis.com/google.rpc.BadRequest"
	TypeRetryInfo  = "type.googleapis.com/google.rpc.RetryInfo"
)

// Details returns the typed details of e: always an ErrorInfo first, then
// BadRequest and RetryInfo when they apply.
func (e *Error) Details() []any {
	details := []any{ErrorInfo{Type: TypeErrorInfo, Reason: e.Kind.Reason, Domain: ErrorDomain, Metadata: e.Metadata}}
	if len(e.Violations) > 0 {
		details = append(details, BadRequest{Type: TypeBadRequest, FieldViolations: e.Violations})
	}
	if e.RetryAfter > 0 {
		details = append(details, RetryInfo{Type: TypeRetryInfo, RetryDelay: strconv.Itoa(RetryAfterSeconds(e.RetryAfter)) + "s"})
	}
	return details
}

// RetryAfterSeconds rounds a wait up to whole seconds, at least 1.
func RetryAfterSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

// StatusBody is the HTTP+JSON error body: a google.rpc.Status under "error".
type StatusBody struct {
	Error StatusError `json:"error"`
}

// StatusError is google.rpc.Status as written by the HTTP+JSON binding.
type StatusError struct {
	Code    int    `json:"code"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Details []any  `json:"details"`
}

// Status returns the HTTP+JSON error body of e.
func (e *Error) Status() StatusBody {
	return StatusBody{Error: StatusError{
		Code:    e.Kind.HTTPStatus,
		Status:  e.Kind.Status,
		Message: e.Message,
		Details: e.Details(),
	}}
}
