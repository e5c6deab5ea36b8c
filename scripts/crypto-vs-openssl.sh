#!/bin/bash
# `sysgauge crypto --vs-openssl` in ROUNDS rounds, one after another, and the table
# docs/performance.md gives per CPU: each row's median ratio over the rounds (sysgauge /
# OpenSSL, above 1 is faster), the per-round ratios, each side's median figure, and the
# implementation the trial chose (with how often, where the rounds differed). With UARCH,
# the lines for the embedded table leave the implementation empty where the rounds chose
# differently or a trial's two fastest candidates were within 2 % (either may win).
#
# Usage: scripts/crypto-vs-openssl.sh [ARGS...]   (extra arguments go to `sysgauge crypto`,
#        e.g. --only sha512,rc4)
# Environment: SYSGAUGE (binary, default target/release/sysgauge), ROUNDS (default 3),
# SIZES (default 8KiB), OUT (directory for each round's text and JSON, default a temp dir),
# UARCH (the microarchitecture `sysgauge host` names: also print the rows as lines of
# crates/sysgauge-crypto/src/known_ratios.csv).
#
# Within a round each case's two figures are interleaved: `--vs-openssl` runs `openssl
# speed -mr -elapsed` for a case right after sysgauge measured it. Both run at nice -20
# (when allowed) pinned to the last CPU, so a neighbour's load falls on both alike.
set -u
BIN=${SYSGAUGE:-$(dirname "$0")/../target/release/sysgauge}
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-8KiB}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/crypto-vs-openssl.XXXXXX")}
mkdir -p "$OUT"
CPU=$(($(nproc) - 1))
NICE="nice -n -20"
$NICE true 2>/dev/null || NICE=""
"$BIN" host | grep -E '^(CPU model|CPU family/model|Virtualization) '
openssl version
for r in $(seq 1 "$ROUNDS"); do
  echo "round $r of $ROUNDS" >&2
  $NICE taskset -c "$CPU" "$BIN" crypto --block-sizes "$SIZES" --vs-openssl --no-store \
    --no-wait --json "$OUT/r$r.json" "$@" > "$OUT/r$r.txt" 2>/dev/null || { echo "round $r failed" >&2; exit 1; }
done
python3 - "$OUT" "$ROUNDS" "${UARCH:-}" "$(openssl version | cut -d' ' -f1-2)" <<'EOF'
import json, re, statistics, sys
from collections import Counter
out, rounds, uarch, reference = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

CURVES = {"p192": "nistp192", "p224": "nistp224", "p256": "nistp256", "p384": "nistp384",
          "p521": "nistp521"}

def display(bench_id):
    # as crypto/report.rs's display_name
    tail = bench_id.split(".", 1)[1]
    kind, _, rest = tail.partition("-")
    if kind in ("rsa", "dsa") and rest.isdigit():
        return f"{kind} {rest} bits"
    if kind in ("ecdsa", "ecdh") and rest in CURVES:
        return f"{kind} {rest[1:]} bits ({CURVES[rest]})"
    return {"ed25519": "EdDSA 253 bits (Ed25519)", "x25519": "ecdh 253 bits (X25519)"}.get(tail, tail)

ids = {}
for res in json.load(open(f"{out}/r1.json"))["results"]:
    for m in res["metrics"]:
        bs = res["params"].get("block_size")
        case = f"{bs} bytes" if bs else m["name"]
        ids[(display(res["bench_id"]), case)] = (res["bench_id"], bs or "", m["name"])
num = lambda x: f"{x:.0f}" if x >= 100 else f"{x:.4g}"
csv = []
rows, order, impl, close = {}, [], {}, set()
for r in range(1, rounds + 1):
    text = open(f"{out}/r{r}.txt").read()
    table = text.split("implementation of each row")[0]
    for line in table.splitlines():
        # algorithm  case  threads  sysgauge  openssl  unit  ratio
        m = re.match(r"^(.+?)\s{2,}(\S+(?: bytes)?)\s+(\d+)\s+(\S+)\s+(\S+)\s+(MB/s|op/s)\s+(\S+)$", line)
        if not m or m.group(7) == "-":
            continue
        key = (m.group(1).strip(), m.group(2))
        if key not in rows:
            rows[key] = []
            order.append(key)
        rows[key].append((float(m.group(4)), float(m.group(5)), float(m.group(7))))
    for line in text.splitlines():
        m = re.match(r"^  (.+?) (\d+ bytes|sign|verify|ops): ([^;]+);(.*)$", line)
        if m:
            key = (m.group(1), m.group(2))
            impl.setdefault(key, Counter())[m.group(3)] += 1
            # A trial whose two fastest were within 2 % may choose either.
            rates = sorted((float(x) for x in re.findall(r" (\d+(?:\.\d+)?)(?=,| MB/s| op/s)", m.group(4))), reverse=True)
            if len(rates) > 1 and rates[1] >= 0.98 * rates[0]:
                close.add(key)
print("| algorithm | case | sysgauge | openssl | ratio | per round | implementation |")
print("|---|---|---:|---:|---:|---|---|")
for key in order:
    v = rows[key]
    ratio = statistics.median(x[2] for x in v)
    chosen = impl.get(key) or impl.get((key[0].split(" ")[0], key[1]), Counter())
    names = ", ".join(n if c == len(v) else f"{n} ({c}/{len(v)})" for n, c in chosen.most_common())
    bold = "**%.2f**" % ratio if ratio >= 0.995 else "%.2f" % ratio
    print(f"| {key[0]} | {key[1]} | {num(statistics.median(x[0] for x in v))} | "
          f"{num(statistics.median(x[1] for x in v))} | {bold} | "
          f"{', '.join('%.2f' % x[2] for x in v)} | {names} |")
    if uarch and key in ids:
        bench_id, bs, metric = ids[key]
        tie = key in close or (key[0].split(" ")[0], key[1]) in close
        one = next(iter(chosen)) if len(chosen) == 1 and not tie else ""
        csv.append(f"{uarch},{bench_id},{bs},{metric},{one},{ratio:.2f},{reference}")
if csv:
    print()
    print("\n".join(csv))
EOF
