package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Describe names the database url points at for an operator's message:
// postgres://host:port/database, without the user, the password or the
// parameters. A URL that does not parse is "the database".
func Describe(url string) string {
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return "the database"
	}
	return describe(cfg)
}

func describe(cfg *pgconn.Config) string {
	hosts := []string{hostPort(cfg.Host, cfg.Port)}
	for _, fb := range cfg.Fallbacks {
		if h := hostPort(fb.Host, fb.Port); h != hosts[len(hosts)-1] {
			hosts = append(hosts, h)
		}
	}
	return "postgres://" + strings.Join(hosts, ",") + "/" + cfg.Database
}

func hostPort(host string, port uint16) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// Describe names the store's database as the package function does.
func (s *DB) Describe() string { return describe(&s.pool.Config().ConnConfig.Config) }

// Identify connects to url and returns the id of the kfa data it holds:
// its change log's epoch, the same on every process that opens it and
// different for every database. A database without kfa data gives ""; it
// is only read, never migrated. Its errors never hold the password.
func Identify(ctx context.Context, url string) (string, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return "", errors.New("postgres: malformed database URL (want postgres://user:password@host:port/database)")
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(context.Background())
	var epoch string
	err = conn.QueryRow(ctx, "SELECT value FROM kfa_meta WHERE key = 'feed_epoch'").Scan(&epoch)
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows), errors.As(err, &pe) && pe.Code == "42P01": // undefined_table
		return "", nil
	case err != nil:
		return "", fmt.Errorf("postgres: read the database's id: %w", err)
	}
	return epoch, nil
}
