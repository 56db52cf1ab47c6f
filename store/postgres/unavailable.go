package postgres

import (
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// unavailableError is a failure to reach PostgreSQL (refused, dropped,
// shutting down, starting up): the request may succeed when retried, and
// the bindings answer 503 UNAVAILABLE rather than 500. Callers recognize
// it by its Unavailable method, without importing this package.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string {
	return "postgres: the database is not answering: " + e.err.Error()
}
func (e *unavailableError) Unwrap() error     { return e.err }
func (e *unavailableError) Unavailable() bool { return true }

// unavailable marks err as an unavailableError when it says that the
// database cannot be reached; other errors (nil too) pass unchanged.
func unavailable(err error) error {
	if err == nil || !isUnreachable(err) {
		return err
	}
	var ue *unavailableError
	if errors.As(err, &ue) {
		return err
	}
	return &unavailableError{err: err}
}

// isUnreachable tells whether err is a connection failure rather than an
// answer from the database.
func isUnreachable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// 08: connection exception; 57P01-03: admin shutdown, crash
		// shutdown, cannot connect now (starting up or shutting down).
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.SafeToRetry(err)
}
