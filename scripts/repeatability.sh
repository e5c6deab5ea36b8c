#!/usr/bin/env bash
# Do the index's 95 % intervals mean what they say? Runs N back-to-back
# `sysgauge run`s of one profile (each waits for a quiet machine first, and
# stores nothing), then reports for every family index and the overall
# index: each run's value, the spread over the runs (max/min), and how
# often a run's interval contains the next run's value. A 95 % interval
# that carries the run-to-run variance should contain the next value about
# 95 % of the time; far less means the interval is too narrow for this
# machine. docs/repeatability.md has the figures of the reference machine.
#
#   scripts/repeatability.sh [N] [PROFILE]     (default: 10 quick runs)
#
# SYSGAUGE names the binary (default target/release/sysgauge); the runs'
# outputs are kept in a temporary directory whose name is printed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

n=${1:-10}
profile=${2:-quick}
case $n in
  '' | *[!0-9]* | 0 | 1)
    echo "usage: scripts/repeatability.sh [N of at least 2] [PROFILE]" >&2
    exit 2
    ;;
esac
bin=${SYSGAUGE:-target/release/sysgauge}
[ -x "$bin" ] || {
  echo "repeatability.sh: no binary at $bin (cargo build --release, or set SYSGAUGE)" >&2
  exit 2
}
out=$(mktemp -d)
echo "runs of the $profile profile, outputs in $out" >&2
"$bin" host | grep -E '^(CPU model|Cores|Threads|Virtualization)' >&2 || true
for i in $(seq 1 "$n"); do
  start=$SECONDS
  "$bin" run --profile "$profile" --no-store >"$out/run-$i.txt" 2>"$out/run-$i.err"
  echo "run $i of $n: $((SECONDS - start)) s" >&2
done

python3 - "$out" "$n" <<'EOF'
import re, sys
out, n = sys.argv[1], int(sys.argv[2])
# The index table of a run's summary: "family  index  95 % interval  based on".
row = re.compile(r"^(\w+)\s+(\d+)\s+(\d+)-(\d+)\s")
runs = []
for i in range(1, n + 1):
    table, inside = {}, False
    for line in open(f"{out}/run-{i}.txt"):
        if line.startswith("family ") and "interval" in line:
            inside = True
            continue
        if inside:
            if not line.strip():
                break
            m = row.match(line)
            if m:
                table[m[1]] = (int(m[2]), int(m[3]), int(m[4]))
    if not table:
        sys.exit(f"run {i}: no index table in its output ({out}/run-{i}.txt)")
    runs.append(table)
families = [f for f in runs[0] if all(f in r for r in runs)]
print(f"{'index':<8} {'values':<{6 * n}} {'max/min':>7}  next run inside the interval")
for f in families:
    values = [r[f][0] for r in runs]
    hits = sum(runs[i + 1][f][0] >= runs[i][f][1] and runs[i + 1][f][0] <= runs[i][f][2]
               for i in range(n - 1))
    spread = max(values) / min(values)
    print(f"{f:<8} {' '.join(f'{v:5d}' for v in values):<{6 * n}} {spread:7.3f}  "
          f"{hits} of {n - 1} ({100 * hits / (n - 1):.0f} %)")
EOF
