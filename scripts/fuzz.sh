#!/usr/bin/env bash
# Runs every cargo-fuzz target under fuzz/ for a bounded time, one after
# the other, and prints a table of executions and crashes per target.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS per target (default 60); TARGETs default to all of them.
# Environment:
#   SYSGAUGE_FUZZ_RUNS       also stop each target after this many
#                            executions (the campaign's 10000000)
#   SYSGAUGE_FUZZ_SANITIZER  none (default) or address
#
# Needs the nightly toolchain (cargo-fuzz is installed with `cargo install
# cargo-fuzz --locked` when missing). Each target starts from its committed
# seeds (fuzz/seeds/TARGET, read only) plus what earlier runs found
# (fuzz/corpus/TARGET, not committed). A crash leaves its input in
# fuzz/artifacts/TARGET and makes the script exit 1; logs go to
# fuzz/target/logs. docs/reliability.md records the totals and why the
# build has no sanitizer by default and which targets have a -max_len.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../fuzz"

seconds=${1:-60}
shift || true
case $seconds in
  '' | *[!0-9]*)
    echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]" >&2
    exit 2
    ;;
esac
runs=${SYSGAUGE_FUZZ_RUNS:-}
case $runs in
  *[!0-9]*)
    echo "fuzz.sh: SYSGAUGE_FUZZ_RUNS must be a number of executions" >&2
    exit 2
    ;;
esac
# The fuzzed code has no `unsafe` of its own (the crates' few unsafe calls
# are syscalls the targets never reach), so AddressSanitizer mostly costs
# time: its build took 24 min here and it runs 2-3 times slower. Debug
# assertions and overflow checks stay on either way.
sanitizer=${SYSGAUGE_FUZZ_SANITIZER:-none}
case $sanitizer in
  none | address) ;;
  *)
    echo "fuzz.sh: SYSGAUGE_FUZZ_SANITIZER is none or address" >&2
    exit 2
    ;;
esac

# Inputs longer than this only repeat what the target's parsers read line
# by line (see docs/reliability.md); other targets keep libFuzzer's default.
max_len_of() {
  case $1 in
    host_proc_sys | ssh_output) echo 1024 ;;
    import_tools) echo 2048 ;;
    *) echo 0 ;;
  esac
}

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz.sh: the nightly toolchain is needed (rustup toolchain install nightly)" >&2
  exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo +nightly fuzz list)
fi

cargo +nightly fuzz build -s "$sanitizer" >&2
mkdir -p target/logs
summary=()
failed=0
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "seeds/$t"
  log="target/logs/$t.log"
  echo "== fuzzing $t for ${seconds}s${runs:+ or $runs executions}" >&2
  flags=(-max_total_time="$seconds" -print_final_stats=1)
  if [ -n "$runs" ]; then
    flags+=(-runs="$runs")
  fi
  max_len=$(max_len_of "$t")
  if [ "$max_len" -gt 0 ]; then
    flags+=(-max_len="$max_len")
  fi
  status=0
  start=$SECONDS
  # The corpus directory comes first: new inputs are written there, the
  # seeds are only read.
  cargo +nightly fuzz run -s "$sanitizer" "$t" "corpus/$t" "seeds/$t" -- \
    "${flags[@]}" >"$log" 2>&1 || status=$?
  took=$((SECONDS - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ "$status" -ne 0 ]; then
    failed=1
    summary+=("$(printf '%-18s %14s %7ss  CRASH (exit %s, see %s and artifacts/%s)' "$t" "${execs:-?}" "$took" "$status" "fuzz/$log" "$t")")
  else
    summary+=("$(printf '%-18s %14s %7ss  0 crashes' "$t" "${execs:-?}" "$took")")
  fi
done

printf '%-18s %14s %8s  %s\n' target executions time result
printf '%s\n' "${summary[@]}"
exit "$failed"
