#!/usr/bin/env bash
# sysgauge's network measurements beside the reference tools, on loopback,
# interleaved (ours, reference, ours, reference, ...) as docs/performance.md
# reports them:
#   1. flood ping: `sysgauge ping -f` against `sysgauge listen` vs
#      `2ping -f` against `2ping --listen`, same count;
#   2. TCP single stream: `sysgauge run --only net.tcp-throughput` vs
#      `iperf3 -c 127.0.0.1 -t 5` against `iperf3 -s -1 -B 127.0.0.1`.
# Needs a release build (cargo build --release), 2ping, iperf3 and python3.
# Usage: scripts/net-vs-reference.sh [ROUNDS] [PING_COUNT]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SG=./target/release/sysgauge
ROUNDS=${1:-5}
N=${2:-20000}
P_OURS=26001
P_REF=26002
P_IPERF=26003
for p in "$SG" 2ping iperf3 python3; do
  command -v "$p" >/dev/null || { echo "needs $p" >&2; exit 2; }
done

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# Pings per second from the client's statistics.
rate() { python3 "$(dirname "$0")/twoping-rate.py"; }

echo "== flood ping, $N pings, $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
  echo "round $round ($(uptime | sed 's/.*load/load/'))"
  "$SG" listen -I 127.0.0.1 --port $P_OURS -q -w 600 >/dev/null 2>&1 &
  pids+=($!)
  sleep 0.5
  echo -n "  sysgauge: "
  "$SG" ping -f -c "$N" --port $P_OURS --no-store 127.0.0.1 2>&1 | grep transmitted | rate
  kill -INT "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
  # A background job ignores SIGINT in a script: stop 2ping with SIGTERM.
  2ping --listen -I 127.0.0.1 --port $P_REF -q >/dev/null 2>&1 &
  pids+=($!)
  sleep 2
  echo -n "  2ping:    "
  2ping -f -c "$N" --port $P_REF 127.0.0.1 2>&1 | grep transmitted | rate
  kill -TERM "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
done

echo "== TCP throughput, one stream, $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
  echo "round $round ($(uptime | sed 's/.*load/load/'))"
  iperf3 -s -1 -B 127.0.0.1 -p $P_IPERF >/dev/null 2>&1 &
  pids+=($!)
  sleep 0.5
  iperf3 -c 127.0.0.1 -p $P_IPERF -t 5 2>&1 | awk '/receiver/ {print "  iperf3:   " $7 " " $8}'
  wait "${pids[-1]}" 2>/dev/null || true
  "$SG" run --only net.tcp-throughput --no-store --json - 2>/dev/null | python3 -c '
import json, sys
for r in json.load(sys.stdin)["results"]:
    b = {m["name"]: m for m in r["metrics"]}["bitrate"]["summary"]
    print("  sysgauge: streams=%s median %.2f Gbit/s, mean %.2f (n %d, CoV %.1f %%)"
          % (r["params"]["streams"], b["median"] / 1000, b["mean"] / 1000, b["n"], b["cov"] * 100))
'
done
