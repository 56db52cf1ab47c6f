package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/store/internal/storedoc"
)

func putSignKey(ctx context.Context, tx execer, k *signing.KeyRecord) error {
	v, err := storedoc.EncodeSignKey(k)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO signing_keys (created_ms, id, doc) VALUES ($1, $2, $3)
		ON CONFLICT (created_ms, id) DO UPDATE SET doc = excluded.doc`, k.CreatedAt.UnixMilli(), k.ID, v)
	return err
}

// The schema's SigningKeys, in signing_keys.
func init() {
	mapped[commands.SigningKeys] = &table[signing.KeyRecord]{
		kind: commands.SigningKeys, name: "signing_keys", key: []column{{"t.created_ms", convMillis}, {"t.id", convText}},
		cols: "t.doc", read: docScan(storedoc.DecodeSignKey),
		write: func(w *pgWrites, _, k *signing.KeyRecord) error { return putSignKey(w.ctx, w.w, k) },
		remove: func(w *pgWrites, old *signing.KeyRecord) error {
			return w.exec("DELETE FROM signing_keys WHERE created_ms = $1 AND id = $2", old.CreatedAt.UnixMilli(), old.ID)
		},
	}
}

// signKeys reads every key, newest first.
func signKeys(ctx context.Context, tx rowQuerier) ([]signing.KeyRecord, error) {
	rows, err := tx.Query(ctx, "SELECT doc FROM signing_keys ORDER BY created_ms DESC, id DESC")
	if err != nil {
		return nil, err
	}
	docs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, err
	}
	out := make([]signing.KeyRecord, 0, len(docs))
	for _, v := range docs {
		k, err := storedoc.DecodeSignKey(v)
		if err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		out = append(out, k)
	}
	return out, nil
}

// SigningKeys implements signing.Store in one statement.
func (s *DB) SigningKeys(ctx context.Context) ([]signing.KeyRecord, error) {
	var out []signing.KeyRecord
	err := s.readStatement(ctx, func(q rowQuerier) error {
		var err error
		out, err = signKeys(ctx, q)
		return err
	})
	return out, err
}

var _ signing.Store = (*DB)(nil)
