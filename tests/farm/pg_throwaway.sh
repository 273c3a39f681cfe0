#!/usr/bin/env bash
# pg_throwaway.sh: a throwaway PostgreSQL server for the farm's tests and benchmark.
#
#   pg_throwaway.sh start DIR   initdb in DIR/data, start on a free loopback port with
#                               its socket in DIR; prints the server's base URI
#                               (postgresql://cairn@127.0.0.1:PORT) on stdout
#   pg_throwaway.sh createdb DIR NAME   makes database NAME; prints its URI
#   pg_throwaway.sh stop DIR    stops it (fast shutdown); DIR is left for the caller
#
# initdb refuses to run as root: as root, the server runs as the package's `postgres`
# user (runuser), which then owns DIR. Debian's postgresql package puts initdb and
# pg_ctl under /usr/lib/postgresql/VERSION/bin (scripts/deps.sh installs it).
set -euo pipefail

cmd=${1:?usage: pg_throwaway.sh start|createdb|stop DIR [NAME]}
dir=${2:?usage: pg_throwaway.sh start|createdb|stop DIR [NAME]}
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bindir/pg_ctl" ] || { echo "pg_throwaway: no PostgreSQL server (run scripts/deps.sh)" >&2; exit 1; }

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case $cmd in
start)
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  as_owner "$bindir/initdb" -D "$dir/data" -U cairn --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # Enough for several coordinators' pools; small buffers: tests and benchmarks only.
  as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=64MB" \
    >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
  echo "$port" >"$dir/port"
  echo "postgresql://cairn@127.0.0.1:$port"
  ;;
createdb)
  name=${3:?usage: pg_throwaway.sh createdb DIR NAME}
  port=$(cat "$dir/port")
  as_owner "$bindir/createdb" -h "$dir" -p "$port" -U cairn "$name"
  echo "postgresql://cairn@127.0.0.1:$port/$name"
  ;;
stop)
  [ -d "$dir/data" ] && as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
  ;;
*)
  echo "pg_throwaway: unknown command $cmd" >&2
  exit 2
  ;;
esac
