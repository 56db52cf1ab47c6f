package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/tasks"
)

// readWindow is agent's kept time of a limit of kind, zero when it has
// none.
func readWindow(ctx context.Context, tx pgx.Tx, kind, agent string) (time.Time, error) {
	var ns int64
	err := tx.QueryRow(ctx, "SELECT tat_ns FROM rate_windows WHERE kind = $1 AND agent_id = $2", kind, agent).Scan(&ns)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, err
	}
	return time.Unix(0, ns).UTC(), nil
}

// AskUsage implements tasks.Store: the ask window and the open-task
// counter that an ask's transaction checks, read in one snapshot.
func (s *DB) AskUsage(ctx context.Context, ownerID string) (tasks.AskUsage, error) {
	var u tasks.AskUsage
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		if u.Window, err = readWindow(ctx, tx, windowAsk, ownerID); err != nil {
			return err
		}
		u.Open, err = readCounter(ctx, tx, openCounter(ownerID))
		return err
	})
	return u, err
}

// ReplyWindow implements discussions.Store.
func (s *DB) ReplyWindow(ctx context.Context, agentID string) (time.Time, error) {
	var w time.Time
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		w, err = readWindow(ctx, tx, windowReply, agentID)
		return err
	})
	return w, err
}
