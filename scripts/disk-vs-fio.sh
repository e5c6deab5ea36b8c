#!/bin/bash
# sysgauge disk seq-write / seq-read at 1 MiB with O_DIRECT side by side with fio using the
# same parameters, on the same file system, with the same file size; interleaved rounds in
# alternating order. See docs/performance.md.
#
# Usage: scripts/disk-vs-fio.sh [DIR]   (as root: fio's huge-page buffers need vm.nr_hugepages)
# Environment: SYSGAUGE (binary, default target/release/sysgauge), SIZE (MiB, default 1024),
# ROUNDS (default 6), OUT (raw numbers, default a temp file).
#
# Like for like: both write from huge-page buffers that are not modified between writes
# (fio --iomem=shmhuge --scramble_buffers=0), one request per 1 MiB write; both run `sync`
# before measuring; both write their file right before reading it; each sysgauge pass and
# each fio run is one pass over the file ending with an fsync (writes).
# sysgauge: one run per test = 1 warm-up pass + 5 timed passes (samples kept).
# fio: 6 single-pass runs per test (each like one sysgauge pass), the first dropped as warm-up;
# before the reads fio writes its file once, as sysgauge lays out a fresh file before reading.
set -u
BASE=${1:-${TMPDIR:-/tmp}}
D=$(mktemp -d "$BASE/disk-vs-fio.XXXXXX")
BIN=${SYSGAUGE:-$(dirname "$0")/../target/release/sysgauge}
old_hp=$(cat /proc/sys/vm/nr_hugepages)
trap 'rm -rf "$D"; echo "$old_hp" > /proc/sys/vm/nr_hugepages' EXIT
echo $((old_hp + 8)) > /proc/sys/vm/nr_hugepages
SIZE=${SIZE:-1024}
ROUNDS=${ROUNDS:-6}
OUT=${OUT:-$D.tsv}
: > $OUT
sg() { $BIN disk --path $D --size ${SIZE}MiB --block-size 1MiB --only disk.seq-$1 --profile standard --no-store --json - 2>/dev/null | python3 -c '
import json,sys
r=json.load(sys.stdin)["results"][0]
assert r["params"]["direct"] is True
print(" ".join("%.1f"%s for s in r["metrics"][0]["samples"]))'; }
fiorun() { sync; fio --name=seq$1 --filename=$D/fio.dat --size=${SIZE}M --bs=1M --rw=$1 --direct=1 --ioengine=psync --iodepth=1 --overwrite=1 --iomem=shmhuge --scramble_buffers=0 $2 --output-format=json | python3 -c "import json,sys; print('%.1f'%(json.load(sys.stdin)['jobs'][0]['$1']['bw_bytes']/1e6))"; }
fio6() { local v=(); [ $1 = read ] && fiorun write --end_fsync=1 >/dev/null; for i in 1 2 3 4 5 6; do v+=($(fiorun $1 "$2")); done; echo "${v[@]:1}"; }
for round in $(seq 1 $ROUNDS); do
  for t in write read; do
    extra=""; [ $t = write ] && extra="--end_fsync=1"
    if [ $((round % 2)) = 1 ]; then a=$(sg $t); b=$(fio6 $t "$extra"); else b=$(fio6 $t "$extra"); a=$(sg $t); fi
    printf "%s\t%s\tsysgauge\t%s\n" $round $t "$a" >> $OUT
    printf "%s\t%s\tfio\t%s\n" $round $t "$b" >> $OUT
    echo "round $round $t load=$(cut -d' ' -f1 /proc/loadavg) sysgauge: $a | fio: $b"
  done
done
python3 - $OUT <<'PY'
import sys,statistics
rows=[l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
for t in ("write","read"):
    s=[float(x) for r in rows if r[1]==t and r[2]=="sysgauge" for x in r[3].split()]
    f=[float(x) for r in rows if r[1]==t and r[2]=="fio" for x in r[3].split()]
    ms,mf=statistics.median(s),statistics.median(f)
    print(f"{t}: sysgauge median {ms:.1f} MB/s over {len(s)} passes, fio median {mf:.1f} MB/s over {len(f)} passes, ratio {ms/mf:.3f}")
PY
