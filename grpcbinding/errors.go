package grpcbinding

import (
	"net/http"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
)

// codeOf is the gRPC code of an error kind: its google.rpc.Code, the same
// one the HTTP+JSON binding names in its error body (a2a.Kind.Status), so
// the spec's table is kept in one place.
func codeOf(k a2a.Kind) codes.Code {
	switch k.Status {
	case "INVALID_ARGUMENT":
		return codes.InvalidArgument
	case "FAILED_PRECONDITION":
		return codes.FailedPrecondition
	case "NOT_FOUND":
		return codes.NotFound
	case "UNAUTHENTICATED":
		return codes.Unauthenticated
	case "PERMISSION_DENIED":
		return codes.PermissionDenied
	case "RESOURCE_EXHAUSTED":
		return codes.ResourceExhausted
	case "UNIMPLEMENTED":
		return codes.Unimplemented
	case "UNAVAILABLE":
		return codes.Unavailable
	}
	return codes.Internal
}

// statusOf is e as a google.rpc.Status: its code, its message, and the
// details every binding gives it (ErrorInfo first, then BadRequest and
// RetryInfo when they apply).
func statusOf(e *a2a.Error) *status.Status {
	details := []protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: e.Kind.Reason, Domain: a2a.ErrorDomain, Metadata: e.Metadata}}
	if len(e.Violations) > 0 {
		br := &errdetails.BadRequest{}
		for _, v := range e.Violations {
			br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: v.Field, Description: v.Description})
		}
		details = append(details, br)
	}
	if e.RetryAfter > 0 {
		details = append(details, &errdetails.RetryInfo{
			RetryDelay: durationpb.New(time.Duration(a2a.RetryAfterSeconds(e.RetryAfter)) * time.Second)})
	}
	st := status.New(codeOf(e.Kind), e.Message)
	if withDetails, err := st.WithDetails(details...); err == nil {
		return withDetails
	}
	return st
}

// errorMetadata is what the HTTP bindings send as headers with e
// (Retry-After, the Bearer challenge), as gRPC metadata; challenge, when
// set, rewrites the challenge as the server wants it (OAuth's
// resource_metadata).
func errorMetadata(e *a2a.Error, challenge func(string) string) metadata.MD {
	h := http.Header{}
	httpkit.SetErrorHeaders(h, e)
	if c := h.Get("WWW-Authenticate"); c != "" && challenge != nil {
		h.Set("WWW-Authenticate", challenge(c))
	}
	return headerMD(h)
}

// headerMD is h as gRPC metadata: the same names, lower-cased.
func headerMD(h http.Header) metadata.MD {
	if len(h) == 0 {
		return nil
	}
	md := make(metadata.MD, len(h))
	for k, v := range h {
		md[strings.ToLower(k)] = v
	}
	return md
}
