package postgres

import (
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
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

// commitUnknownError is a write whose COMMIT was sent but whose answer
// never came: the connection broke, the server went down, or the request
// ended while it waited (for a synchronous standby, say). The transaction
// may have committed or not, and nothing in this process can tell, so the
// write is never run again here and never answered as a success: the
// bindings answer 503 UNAVAILABLE, and a client retries with the same
// messageId (an ask), or reads before it writes again (see
// docs/scale-out.md, "Failover").
type commitUnknownError struct{ err error }

func (e *commitUnknownError) Error() string {
	return "postgres: the database went away while the write was committing; it may or may not have been stored: " + e.err.Error()
}
func (e *commitUnknownError) Unwrap() error { return e.err }

// Unavailable implements the mark unavailableError has.
func (e *commitUnknownError) Unavailable() bool { return true }

// CommitUnknown marks a write whose outcome is unknown, for the bindings'
// message.
func (e *commitUnknownError) CommitUnknown() bool { return true }

// commitFailed classifies the error of a batch that ended with COMMIT (or
// of pgx's Commit): an error the server answered for a statement, the
// COMMIT included, aborted the transaction, and comes back as it is; any
// other error (a broken connection, a shutdown that cut the session, the
// context ending while the server worked) leaves the outcome unknown.
func commitFailed(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrTxCommitRollback) {
		return err // the transaction had failed already: ROLLBACK was its end
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && severity(pe) == "ERROR" && !isUnreachable(pe) {
		return err
	}
	return &commitUnknownError{err: err}
}

// isCommitUnknown tells whether err is a write of unknown outcome, which
// must not run again.
func isCommitUnknown(err error) bool {
	var ce *commitUnknownError
	return errors.As(err, &ce)
}

// severity is pe's severity in English (ERROR, FATAL, PANIC).
func severity(pe *pgconn.PgError) string {
	if pe.SeverityUnlocalized != "" {
		return pe.SeverityUnlocalized
	}
	return pe.Severity
}
