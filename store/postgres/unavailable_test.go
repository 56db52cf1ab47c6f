package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kfa-project/kfa/tasks"
)

func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"no rows", pgx.ErrNoRows, false},
		{"domain error", tasks.ErrNotFound, false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"canceled", context.Canceled, false},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"starting up", fmt.Errorf("begin: %w", &pgconn.PgError{Code: "57P03"}), true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"dropped", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := unavailable(tc.err)
			var u interface{ Unavailable() bool }
			if got := errors.As(err, &u) && u.Unavailable(); got != tc.want {
				t.Fatalf("unavailable(%v) marked %v, want %v", tc.err, got, tc.want)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Fatalf("the mark hides the cause: %v", err)
			}
			if tc.want && !errors.Is(unavailable(err), tc.err) {
				t.Fatal("marking twice lost the cause")
			}
		})
	}
}

// TestCommitFailed: an error the server answered for a statement of the
// COMMIT's batch aborted the transaction; anything else after COMMIT was
// sent leaves its outcome unknown, and is never retried.
func TestCommitFailed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		unknown bool
	}{
		{"committed", nil, false},
		{"unique violation", &pgconn.PgError{Severity: "ERROR", Code: "23505"}, false},
		{"deadlock", fmt.Errorf("batch: %w", &pgconn.PgError{Severity: "ERROR", Code: "40P01"}), false},
		{"rolled back already", pgx.ErrTxCommitRollback, false},
		{"dropped", io.ErrUnexpectedEOF, true},
		{"shut down while committing", &pgconn.PgError{Severity: "FATAL", Code: "57P01"}, true},
		{"crash of another backend", &pgconn.PgError{Severity: "FATAL", Code: "57P02"}, true},
		{"request ended", context.Canceled, true},
		{"timed out", context.DeadlineExceeded, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := commitFailed(tc.err)
			if isCommitUnknown(err) != tc.unknown {
				t.Fatalf("commitFailed(%v) = %v, unknown %v, want %v", tc.err, err, isCommitUnknown(err), tc.unknown)
			}
			if tc.unknown && !errors.Is(err, tc.err) {
				t.Fatalf("the mark hides the cause: %v", err)
			}
		})
	}
}
