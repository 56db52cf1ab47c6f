package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// pageDocs is one page of a keyset listing, in one statement: query
// selects the doc column of at most limit+1 rows in page order; pageDocs
// decodes up to limit of them onto out, and next is the id of the last
// one kept when there were more.
func pageDocs[T any](ctx context.Context, s *DB, limit int, decode func([]byte) (T, error), id func(T) string,
	out []T, query string, args ...any) ([]T, string, error) {
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
		return out, "", err
	}
	return keepPage(docs, limit, decode, id, out)
}

// totalPage is one page of a keyset listing and the listing's total, in
// one statement (one snapshot, one round trip), even when the page is
// empty: total is a query of one number, page one as pageDocs takes
// (ordered, at most limit+1 rows), both over args. The page comes back
// as one array, in its order.
func totalPage[T any](ctx context.Context, s *DB, limit int, decode func([]byte) (T, error), id func(T) string,
	out []T, total, page string, args ...any) ([]T, string, int, error) {
	var (
		n    int64
		docs [][]byte
	)
	if err := s.readRow(ctx, "SELECT ("+total+"), ARRAY("+page+")", args, &n, &docs); err != nil {
		return out, "", 0, err
	}
	out, next, err := keepPage(docs, limit, decode, id, out)
	return out, next, int(n), err
}

// keepPage decodes up to limit of docs onto out; next is the id of the
// last one kept when there were more.
func keepPage[T any](docs [][]byte, limit int, decode func([]byte) (T, error), id func(T) string, out []T) ([]T, string, error) {
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
