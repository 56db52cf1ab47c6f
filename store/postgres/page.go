package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// querier is what pageDocs reads through: a transaction or the pool.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// pageDocs is one page of a keyset listing: query selects the doc column
// of at most limit+1 rows in id order; pageDocs decodes up to limit of
// them onto out, and next is the id of the last one kept when there were
// more. A connection failure comes back marked unavailable.
func pageDocs[T any](ctx context.Context, q querier, limit int, decode func([]byte) (T, error), id func(T) string,
	out []T, query string, args ...any) ([]T, string, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return out, "", unavailable(err)
	}
	docs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return out, "", unavailable(err)
	}
	for i, v := range docs {
		if i == limit {
			if len(out) == 0 {
				return out, "", nil // limit 0: nothing asked, nothing to go on from
			}
			return out, id(out[len(out)-1]), nil
		}
		x, err := decode(v)
		if err != nil {
			return out, "", err
		}
		out = append(out, x)
	}
	return out, "", nil
}
