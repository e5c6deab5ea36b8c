#!/usr/bin/env bash
# Runs every cargo-fuzz target under fuzz/ for a bounded time, one after
# the other, and prints a table of executions and crashes per target.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS per target (default 60); TARGETs default to all of them. Needs
# the nightly toolchain (cargo-fuzz is installed with `cargo install
# cargo-fuzz --locked` when missing). Each target starts from its committed
# seeds (fuzz/seeds/TARGET, read only) plus what earlier runs found
# (fuzz/corpus/TARGET, not committed). A crash leaves its input in
# fuzz/artifacts/TARGET and makes the script exit 1; logs go to
# fuzz/target/logs. docs/reliability.md records the totals.
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

cargo +nightly fuzz build >&2
mkdir -p target/logs
summary=()
failed=0
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "seeds/$t"
  log="target/logs/$t.log"
  echo "== fuzzing $t for ${seconds}s" >&2
  status=0
  # The corpus directory comes first: new inputs are written there, the
  # seeds are only read.
  cargo +nightly fuzz run "$t" "corpus/$t" "seeds/$t" -- \
    -max_total_time="$seconds" -print_final_stats=1 >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ "$status" -ne 0 ]; then
    failed=1
    summary+=("$(printf '%-18s %14s  CRASH (exit %s, see %s and artifacts/%s)' "$t" "${execs:-?}" "$status" "fuzz/$log" "$t")")
  else
    summary+=("$(printf '%-18s %14s  0 crashes' "$t" "${execs:-?}")")
  fi
done

printf '%-18s %14s  %s\n' target executions result
printf '%s\n' "${summary[@]}"
exit "$failed"
