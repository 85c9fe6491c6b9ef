#!/usr/bin/env bash
# Start a throw-away PostgreSQL server on 127.0.0.1 for the store tests; print its SQLAlchemy URL and,
# on the same line, the folder holding it (`bash .ci/postgres.sh stop FOLDER` stops it and removes it).
# Installs Debian's postgresql package when the server binaries are missing.
set -euo pipefail
if [ "${1:-}" = stop ]; then
  DATA=$2
  BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  RUNAS=()
  [ "$(id -u)" = 0 ] && RUNAS=(runuser -u postgres --)
  "${RUNAS[@]}" "$BIN/pg_ctl" -D "$DATA/db" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$DATA"
  exit 0
fi
PORT=${REGBENCH_PG_PORT:-$(python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])")}
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
  else
    sudo sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql' >&2
  fi
  BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
fi
DATA=$(mktemp -d /tmp/regbench-pg.XXXXXX)
RUNAS=()
if [ "$(id -u)" = 0 ]; then
  chown postgres "$DATA"
  RUNAS=(runuser -u postgres --)
fi
"${RUNAS[@]}" "$BIN/initdb" -D "$DATA/db" -U postgres -A trust >/dev/null
"${RUNAS[@]}" "$BIN/pg_ctl" -D "$DATA/db" -l "$DATA/log" -w \
  -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$DATA -c fsync=off" start >/dev/null
"$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres regbench_test
echo "postgresql+psycopg://postgres@127.0.0.1:$PORT/regbench_test $DATA"
