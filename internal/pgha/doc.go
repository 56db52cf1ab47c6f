// Package pgha starts throwaway PostgreSQL clusters made for failover: a
// primary and streaming standbys (pg_basebackup -R) on free loopback
// ports, which a test or the benchmark stops (pg_ctl stop -m immediate),
// promotes (pg_ctl promote), and rebuilds as standbys of the new primary
// (pg_rewind). Synchronous replication is switched on and off with
// ALTER SYSTEM on the primary.
//
// It needs the server binaries (PostgreSQL 15 from Debian, found as
// .ci/postgres.sh finds them: PG_BIN, /usr/lib/postgresql/15/bin, the
// newest /usr/lib/postgresql/*/bin, PATH). Run as root, every server
// command runs as the postgres user (initdb refuses root), and the
// clusters' directory belongs to it. The clusters hold test data only:
// fsync is off (a process crash, which is what the tests make, loses
// nothing the operating system holds), everything else as in production,
// synchronous_commit included.
//
// It is for tests and the benchmark; kfa itself never imports it.
package pgha
