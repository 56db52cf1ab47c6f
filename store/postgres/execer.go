package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
)

// execer is what a write needs of a transaction. pgx.Tx has it, and so
// has a command's writes (command.go), which queue each statement into
// the batch that ends with COMMIT; the write helpers take an execer and
// work with both.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}
