#!/bin/bash
# How long `sysgauge serve` takes to answer its machines page and a comparison of 10
# machines over a store of 500 machines × 80 cases (docs/performance.md): the generated
# fleet of the store benchmark, the release binary serving it on loopback, curl timing
# sequential requests after a warm-up.
#
# Usage: scripts/serve-latency.sh [postgres://URL]   (default: a SQLite file in a temp dir;
#        a PostgreSQL URL names an empty database to fill)
# Environment: SYSGAUGE (binary, default target/release/sysgauge), REQUESTS (default 30),
#              HOSTS (default 500), CASES (default 80).
set -eu
cd "$(dirname "$0")/.."
D=$(mktemp -d "${TMPDIR:-/tmp}/serve-latency.XXXXXX")
BIN=${SYSGAUGE:-target/release/sysgauge}
REQUESTS=${REQUESTS:-30}
HOSTS=${HOSTS:-500}
CASES=${CASES:-80}
DB=${1:-$D/site.db}
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$D"' EXIT

cargo run --quiet --release -p sysgauge-store --example fleet_dataset -- "$DB" "$HOSTS" "$CASES"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$port
"$BIN" serve --db "$DB" --listen "127.0.0.1:$port" >"$D/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do
  curl -fs -o /dev/null "$URL/health" && break
  sleep 0.1
done
curl -fs -o /dev/null "$URL/health" || { cat "$D/server.log" >&2; echo "serve-latency: the server did not start" >&2; exit 1; }

compare="$URL/compare?ref=host-000"
for h in $(seq 0 9); do compare="$compare&m=host-$(printf %03d "$h")"; done

measure() { # NAME URL
  curl -fs -o /dev/null "$2"   # warm-up
  for _ in $(seq "$REQUESTS"); do
    curl -fs -o /dev/null -w '%{time_total}\n' "$2"
  done | python3 -c '
import statistics, sys
t = sorted(float(x) * 1e3 for x in sys.stdin)
p95 = t[min(len(t) - 1, int(round(0.95 * (len(t) - 1))))]
print(f"| {sys.argv[1]} | {len(t)} | {statistics.median(t):.1f} | {p95:.1f} | {t[-1]:.1f} |")' "$1"
}
echo "store: $("$BIN" host 2>/dev/null | grep -m1 "CPU model" | sed 's/  */ /g'); $HOSTS machines x $CASES cases in $(case "$DB" in postgres*) echo PostgreSQL;; *) echo SQLite;; esac)"
echo "| page | requests | median ms | p95 ms | max ms |"
echo "|---|---:|---:|---:|---:|"
measure "machines page (/)" "$URL/"
measure "compare, 10 machines" "$compare"
measure "API: machines (/api/machines)" "$URL/api/machines"
