#!/usr/bin/env bash
# The flood between two namespace hosts, with a key, beside the reference
# 2ping, as docs/performance.md reports it: two network namespaces joined by
# a veth pair (10.231.7.1 -> 10.231.7.2), HMAC-MD5 key on both programs,
# each client flooding for SECONDS (`-w`), in interleaved rounds:
#   sysgauge ping -f -l PRELOAD, sysgauge ping -f, 2ping -f
# against `sysgauge listen` and `2ping --listen` in the other namespace.
# The rate is received pings divided by the time the client prints.
# Needs root, iproute2, a release build (cargo build --release), 2ping and
# python3. The namespaces are deleted on exit.
# Usage: scripts/netns-flood-vs-2ping.sh [ROUNDS] [SECONDS] [PRELOAD]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SG=${SG:-${CARGO_TARGET_DIR:-./target}/release/sysgauge}
ROUNDS=${1:-3}
SECONDS_EACH=${2:-5}
PRELOAD=${3:-32}
KEY=netns-flood-key
A=sgfv-a
B=sgfv-b
ADDR_B=10.231.7.2
for p in "$SG" 2ping python3 ip; do
  command -v "$p" >/dev/null || { echo "needs $p" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)" >&2; exit 2; }

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  ip netns del "$A" 2>/dev/null || true
  ip netns del "$B" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$A"
ip netns add "$B"
ip link add sgfva netns "$A" type veth peer name sgfvb netns "$B"
ip -n "$A" addr add 10.231.7.1/24 dev sgfva
ip -n "$B" addr add "$ADDR_B/24" dev sgfvb
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set sgfva up
ip -n "$B" link set sgfvb up

# Pings per second from the client's statistics.
rate() { python3 "$(dirname "$0")/twoping-rate.py"; }

ours() {
  ip netns exec "$B" "$SG" listen -4 -I "$ADDR_B" -q --auth "$KEY" -w 600 >/tmp/sgfv-listen.$$ 2>&1 &
  pids+=($!)
  sleep 0.5
  ip netns exec "$A" "$SG" ping -f "$@" -q --auth "$KEY" -w "$SECONDS_EACH" --no-store "$ADDR_B" 2>&1 | rate
  kill -INT "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
  grep -E "datagrams (received|over)" /tmp/sgfv-listen.$$ | sed 's/^/      listener: /'
  rm -f /tmp/sgfv-listen.$$
}

echo "CPU: $("$SG" host 2>/dev/null | awk '/^CPU model/ {sub(/^CPU model +/, ""); print; exit}'), $(nproc) CPUs"
echo "== flood between namespaces, key on both, -w $SECONDS_EACH, $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
  echo "round $round ($(uptime | sed 's/.*load/load/'))"
  echo -n "  sysgauge -f -l $PRELOAD: "
  ours -l "$PRELOAD"
  echo -n "  sysgauge -f:       "
  ours
  # A background job ignores SIGINT in a script: stop 2ping with SIGTERM.
  ip netns exec "$B" 2ping --listen -4 -I "$ADDR_B" -q --auth "$KEY" >/dev/null 2>&1 &
  pids+=($!)
  sleep 2
  echo -n "  2ping -f:          "
  ip netns exec "$A" 2ping -f -q --auth "$KEY" -w "$SECONDS_EACH" "$ADDR_B" 2>&1 | rate
  kill -TERM "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
done
echo "end ($(uptime | sed 's/.*load/load/'))"
