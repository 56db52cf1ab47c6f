package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Reads. A read that serves a request is one statement, run on a
// connection of the pool outside any transaction: one statement reads
// one snapshot of its own, so a transaction around it (BEGIN, the
// statement, COMMIT) would only make its one round trip three. A page
// and its total are one statement too (totalPage). Each such read is
// counted under TripsRead, so that read_routes_test.go holds each to one
// round trip. (The change log's own reads, ReadTail and the cursors, are
// one statement each on the pool.)
//
// Only the operator's whole-database walks (kfa check, the dump of kfa
// migrate) read many statements in one snapshot, through readSnapshot.

// readSnapshot runs fn in one read-only transaction (one snapshot for
// its reads).
func (s *DB) readSnapshot(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return unavailable(s.counted(ctx, TripsRead, func(conn *pgxpool.Conn) error {
		return pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
	}))
}

// rowQuerier is what a read of one statement needs: a transaction, or a
// connection of the pool outside any.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// readStatement runs fn, which makes one statement, on a connection of
// the pool and outside any transaction.
func (s *DB) readStatement(ctx context.Context, fn func(q rowQuerier) error) error {
	return unavailable(s.counted(ctx, TripsRead, func(conn *pgxpool.Conn) error { return fn(conn) }))
}

// readRow runs query, which returns at most one row, as one statement
// and scans the row into dest (pgx.ErrNoRows when there is none).
func (s *DB) readRow(ctx context.Context, query string, args []any, dest ...any) error {
	return s.readStatement(ctx, func(q rowQuerier) error { return q.QueryRow(ctx, query, args...).Scan(dest...) })
}

// readDocs runs query, which selects one bytea column, as one statement
// and decodes each row's value in order.
func readDocs[T any](ctx context.Context, s *DB, decode func([]byte) (T, error), query string, args ...any) ([]T, error) {
	var docs [][]byte
	err := s.readStatement(ctx, func(q rowQuerier) error {
		rows, err := q.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		docs, err = pgx.CollectRows(rows, pgx.RowTo[[]byte])
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(docs))
	for _, v := range docs {
		x, err := decode(v)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}
