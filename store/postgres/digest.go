package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

// digestTables are the tables Digest covers: every table of kfa's data
// (not log_cursors, the followers' bookkeeping, which a running follower
// writes whenever it saves its position).
var digestTables = []string{
	"agents", "change_log", "counters", "credentials", "discussion_totals", "discussions", "inbox", "kfa_meta",
	"kind_index", "kind_records", "log_trim",
	"moderation_flags", "moderation_items", "moderation_log", "push_configs",
	"push_deliveries", "rate_windows", "records", "replies", "signing_keys", "tasks", "web_sessions",
}

// Digest returns a SHA-256 over every row of every table, in a fixed
// order, read in one snapshot. Tests use it to prove that a refused
// request left the database exactly as it was, and that reads write
// nothing.
func (s *DB) Digest() (string, error) {
	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return "", err
	}
	h := sha256.New()
	for _, table := range digestTables {
		var rows string
		// table comes from the fixed list above, never from input.
		if err := tx.QueryRow(ctx, "SELECT coalesce(string_agg(t::text, E'\\n' ORDER BY t::text COLLATE \"C\"), '') FROM "+
			table+" t").Scan(&rows); err != nil {
			return "", err
		}
		h.Write([]byte(table + "\x00" + rows + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
