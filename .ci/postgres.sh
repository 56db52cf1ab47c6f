#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests.
#
#   .ci/postgres.sh start DIR   init a cluster in DIR (a new or empty
#                               directory), start it on a free loopback
#                               port, print its URL on stdout
#   .ci/postgres.sh stop DIR    stop it (DIR is left for the caller to
#                               delete)
#   .ci/postgres.sh resume DIR  start a stopped cluster again, on the same
#                               port (its URL is the one start printed)
#
# The server binaries come from PG_BIN, else /usr/lib/postgresql/15/bin
# (else the newest /usr/lib/postgresql/*/bin), else PATH. Run as root, the cluster belongs to the postgres user (initdb
# refuses root). The server listens on 127.0.0.1 only, with password
# authentication (a random password, in the URL), fsync off: it holds test
# data only.
set -euo pipefail

usage() { echo "usage: $0 start|stop|resume DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$2

bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
if [ ! -x "$bin/initdb" ]; then
  # another Debian version: the newest installed
  for b in /usr/lib/postgresql/*/bin; do [ -x "$b/initdb" ] && bin=$b; done
fi
if [ ! -x "$bin/initdb" ]; then
  bin=$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")
fi
if [ ! -x "$bin/initdb" ]; then
  echo "postgres.sh: no initdb (install the postgresql package)" >&2
  exit 1
fi

# as_owner CMD...: run CMD as the cluster's owner.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$cmd" in
start)
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
  pass=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
  printf '%s\n' "$pass" >"$dir/pwfile"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir/pwfile"; fi
  as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=scram-sha-256 \
    --pwfile="$dir/pwfile" -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    exit 1
  }
  rm -f "$dir/pwfile"
  # A free port: try random ones until the server starts on one.
  for _ in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 40000))
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off \
          -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
      start >/dev/null; then
      echo "$port" >"$dir/port"
      echo "postgres://postgres:$pass@127.0.0.1:$port/postgres?sslmode=disable"
      exit 0
    fi
  done
  echo "postgres.sh: the server did not start; its log:" >&2
  cat "$dir/server.log" >&2 || true
  exit 1
  ;;
resume)
  port=$(cat "$dir/port")
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off \
        -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >/dev/null
  ;;
stop)
  [ -d "$dir/data" ] || exit 0
  as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
  ;;
*)
  usage
  ;;
esac
