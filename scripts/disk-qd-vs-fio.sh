#!/bin/bash
# sysgauge disk.randrw (YABS's disk test: random read/write 50/50, queue depth 64, 2 jobs,
# O_DIRECT) side by side with fio running YABS's job, at 4k, 64k, 512k and 1m, on the same
# file system with the same file size; interleaved rounds in alternating order, the ratio of
# each row per round, then the median of the ratios. See docs/performance.md.
#
# Usage: scripts/disk-qd-vs-fio.sh [DIR]   (DIR on the disk to test; default $TMPDIR or /tmp)
# Environment: SYSGAUGE (binary, default target/release/sysgauge), SIZE (MiB, default 1024;
# YABS uses 2048), ROUNDS (default 5), RUNTIME (fio seconds per size, default 5),
# OUT (raw numbers, default a temp file).
#
# Like for like: fio runs YABS's command line (--ioengine=libaio --rw=randrw --rwmixread=50
# --iodepth=64 --numjobs=2 --direct=1 --gtod_reduce=1 --group_reporting) with --time_based,
# on a file of SIZE it lays out itself, from its buffers of ordinary pages; sysgauge runs
# `disk --only disk.randrw --profile standard` on a file of SIZE it writes in full first,
# from buffers of ordinary pages too (1 warm-up pass + 5 timed passes of about a second
# each; the median of the passes is its figure). Both count both directions: total MB/s is
# read + write.
set -u
BASE=${1:-${TMPDIR:-/tmp}}
D=$(mktemp -d "$BASE/disk-qd-vs-fio.XXXXXX")
BIN=${SYSGAUGE:-$(dirname "$0")/../target/release/sysgauge}
trap 'rm -rf "$D"' EXIT
SIZE=${SIZE:-1024}
ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-5}
OUT=${OUT:-$D.tsv}
SIZES="4k 64k 512k 1m"
: > "$OUT"
# One line per block size: BS total read write (MB/s, medians of the passes).
sg() {
  "$BIN" disk --path "$D" --size "${SIZE}MiB" --only disk.randrw --profile standard \
    --wait-quiet 0 --no-store --json - 2>/dev/null | python3 -c '
import json,sys,statistics
names={4096:"4k",65536:"64k",524288:"512k",1048576:"1m"}
for r in json.load(sys.stdin)["results"]:
    assert r["params"]["iodepth"]==64 and r["params"]["numjobs"]==2
    m={x["name"]:statistics.median(x["samples"]) for x in r["metrics"]}
    print(names[r["params"]["block_size"]], "%.2f %.2f %.2f %s" % (m["throughput"], m["read_throughput"], m["write_throughput"], r["details"].get("engine")))'
}
fiorun() {
  fio --name=rand_rw_$1 --ioengine=libaio --rw=randrw --rwmixread=50 --bs=$1 --iodepth=64 \
    --numjobs=2 --size=${SIZE}M --runtime=$RUNTIME --time_based --direct=1 --gtod_reduce=1 \
    --filename="$D/test.fio" --group_reporting --output-format=json 2>/dev/null | python3 -c '
import json,sys
j=json.load(sys.stdin)["jobs"][0]
r,w=j["read"]["bw_bytes"]/1e6,j["write"]["bw_bytes"]/1e6
print(sys.argv[1], "%.2f %.2f %.2f libaio" % (r+w, r, w))' "$1"
}
# A fresh file each round, as sysgauge writes its own before its cases: both then measure
# right after writing SIZE, with whatever write-back that leaves below the guest.
fioall() { rm -f "$D/test.fio"; for bs in $SIZES; do fiorun "$bs"; done; }
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then a=$(sg); b=$(fioall); else b=$(fioall); a=$(sg); fi
  echo "$a" | sed "s/^/$round\tsysgauge\t/" >> "$OUT"
  echo "$b" | sed "s/^/$round\tfio\t/" >> "$OUT"
  echo "round $round load=$(cut -d' ' -f1 /proc/loadavg)"
  paste <(echo "$a") <(echo "$b") | sed 's/^/  sysgauge | fio: /'
done
python3 - "$OUT" <<'PY'
import sys,statistics
rows=[l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
data={}
for rnd,tool,rest in rows:
    bs,tot,r,w,eng=rest.split()
    data.setdefault((bs,tool),{})[rnd]=(float(tot),float(r),float(w),eng)
print("| block size | sysgauge MB/s (read + write) | fio MB/s (read + write) | ratio per round | median ratio |")
print("|---|---|---|---|---|")
for bs in ("4k","64k","512k","1m"):
    s,f=data.get((bs,"sysgauge"),{}),data.get((bs,"fio"),{})
    rounds=sorted(set(s)&set(f))
    ratios=[s[k][0]/f[k][0] for k in rounds]
    ms=statistics.median(s[k][0] for k in rounds); mf=statistics.median(f[k][0] for k in rounds)
    msr=statistics.median(s[k][1] for k in rounds); msw=statistics.median(s[k][2] for k in rounds)
    mfr=statistics.median(f[k][1] for k in rounds); mfw=statistics.median(f[k][2] for k in rounds)
    print(f"| {bs} | {ms:.1f} ({msr:.1f} + {msw:.1f}) | {mf:.1f} ({mfr:.1f} + {mfw:.1f}) | {' '.join('%.3f'%x for x in ratios)} | {statistics.median(ratios):.3f} |")
PY
