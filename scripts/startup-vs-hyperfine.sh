#!/bin/bash
# `sysgauge startup` with --prepare and a parameter scan side by side with hyperfine
# running the same jobs: interleaved rounds in alternating order, the mean per command of
# each tool, the ratio sysgauge / hyperfine per command and round, and the median of the
# ratios. See docs/performance.md.
#
# Usage: scripts/startup-vs-hyperfine.sh   (as root: the cold-cache job drops the page cache)
# Environment: SYSGAUGE (binary, default target/release/sysgauge), ROUNDS (default 5),
# RUNS (timed runs per command, default 30). On a shared machine run it at real-time priority
# (`chrt -f 10 scripts/startup-vs-hyperfine.sh`): both tools then inherit it.
#
# The jobs (both tools without a shell around the timed command: hyperfine -N):
#   cold: `cat CORPUS` after `sync; echo 3 > /proc/sys/vm/drop_caches` before every run
#         (the prepare is wrapped in `sh -c` because hyperfine -N runs it without a shell);
#   scan: `gzip -L -c CORPUS` for L = 1, 5, 9 (--parameter-scan L 1 9, step 4), stdout to
#         /dev/null.
set -u
D=$(mktemp -d "${TMPDIR:-/tmp}/startup-vs-hyperfine.XXXXXX")
trap 'rm -rf "$D"' EXIT
BIN=${SYSGAUGE:-$(dirname "$0")/../target/release/sysgauge}
ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-30}
CORPUS=$D/corpus
# 2 MB of text: long enough for gzip's levels to differ, short enough for many runs.
for _ in $(seq 8); do cat /usr/share/dict/words 2>/dev/null || seq 1 150000; done | head -c 2000000 > "$CORPUS"
PREP="sh -c 'sync; echo 3 > /proc/sys/vm/drop_caches'"

sg() { # JOB OUT
  case $1 in
    cold) "$BIN" startup "cat $CORPUS" --prepare "$PREP" --runs "$RUNS" --max-runs "$RUNS" \
            --min-time 0 --warmup 1 --no-libraries --no-store --no-wait --export-json "$2" ;;
    scan) "$BIN" startup "gzip -{L} -c $CORPUS" --parameter-scan L 1 9 --parameter-step-size 4 \
            --runs "$RUNS" --max-runs "$RUNS" --min-time 0 --warmup 1 --no-libraries --no-store \
            --no-wait --export-json "$2" ;;
  esac >/dev/null 2>&1
}
hf() { # JOB OUT
  case $1 in
    cold) hyperfine -N --prepare "$PREP" --runs "$RUNS" --warmup 1 --export-json "$2" "cat $CORPUS" ;;
    scan) hyperfine -N -P L 1 9 -D 4 --runs "$RUNS" --warmup 1 --export-json "$2" "gzip -{L} -c $CORPUS" ;;
  esac >/dev/null 2>&1
}

for r in $(seq "$ROUNDS"); do
  for job in cold scan; do
    if [ $((r % 2)) = 1 ]; then
      sg $job "$D/sg-$job-$r.json"; hf $job "$D/hf-$job-$r.json"
    else
      hf $job "$D/hf-$job-$r.json"; sg $job "$D/sg-$job-$r.json"
    fi
  done
done

python3 - "$D" "$ROUNDS" "$CORPUS" <<'EOF'
import json, statistics, sys
d, rounds, corpus = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = {}
for job in ("cold", "scan"):
    for r in range(1, rounds + 1):
        try:
            sg = {x["command"]: x for x in json.load(open(f"{d}/sg-{job}-{r}.json"))["results"]}
            hf = {x["command"]: x for x in json.load(open(f"{d}/hf-{job}-{r}.json"))["results"]}
        except (OSError, ValueError) as e:
            sys.exit(f"round {r} of {job}: {e}")
        for cmd, h in hf.items():
            s = sg.get(cmd)
            if s is None:
                sys.exit(f"{job}: sysgauge timed no {cmd!r} (it has {list(sg)})")
            row = rows.setdefault((job, cmd.replace(corpus, "CORPUS")), {"sg": [], "hf": [], "ratio": []})
            row["sg"].append(s["mean"]); row["hf"].append(h["mean"]); row["ratio"].append(s["mean"] / h["mean"])
print("| job | command | sysgauge mean ms | hyperfine mean ms | ratio per round | median ratio |")
print("|---|---|---:|---:|---|---:|")
for (job, cmd), v in rows.items():
    print(f"| {job} | `{cmd}` | {statistics.median(v['sg'])*1e3:.2f} | {statistics.median(v['hf'])*1e3:.2f} | "
          + ", ".join(f"{x:.3f}" for x in v["ratio"]) + f" | **{statistics.median(v['ratio']):.3f}** |")
EOF
