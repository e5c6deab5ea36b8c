#!/usr/bin/env bash
# Builds, lints and tests sysgauge for every target it ships on, from an
# x86-64 Debian 12 machine, with tools from package registries only:
# Debian's cross compilers and qemu-user, rustup's targets, zig and
# cargo-zigbuild from PyPI (the ziglang and cargo-zigbuild packages) and
# bindgen-cli from crates.io.
#
#   scripts/cross.sh setup                        install all of that (root)
#   scripts/cross.sh build [--profile P] [T...]   build sysgauge (default:
#                                                 every target, release) and
#                                                 print `file` of each binary
#   scripts/cross.sh clippy [T...]                clippy -D warnings, all targets
#   scripts/cross.sh test [-p CRATE]... [T...]    unit tests (the workspace's,
#                                                 or those crates') and a tiny
#                                                 run under qemu-user (ARM glibc)
#   scripts/cross.sh tiny [--cpu C] [--profile P] T...
#                                                 a tiny run of the binary
#                                                 already built for T (any ARM
#                                                 target) under qemu-user, on
#                                                 CPU model C (e.g. arm1176)
#
# build and test take --lint: the workspace's crates are compiled by
# clippy-driver with -D warnings (what `cargo clippy` runs, but in the
# build itself), so a build that is needed anyway is also the lint; .ci/run
# uses that instead of a clippy pass of its own.
#
# Targets (docs/architecture.md, "Targets"): glibc builds link dynamically
# with Debian's cross gcc; musl builds are fully static and link with zig.
# The 32-bit musl targets (armv7 Pi 2 and later, armv6 Pi 1 and Zero) build
# the standard library from source with the nightly toolchain, because
# rustup ships no prebuilt one for them to this machine's registries.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

GLIBC_TARGETS=(x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf)
MUSL_TARGETS=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
BUILD_STD_TARGETS=(armv7-unknown-linux-musleabihf arm-unknown-linux-musleabihf)
ALL_TARGETS=("${GLIBC_TARGETS[@]}" "${MUSL_TARGETS[@]}" "${BUILD_STD_TARGETS[@]}")
# The targets whose tests and tiny run go through qemu-user.
EMULATED_TARGETS=(aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf)

APT_PACKAGES=(
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  gcc-arm-linux-gnueabihf libc6-dev-armhf-cross
  qemu-user qemu-user-binfmt binfmt-support
  # aws-lc-sys builds 32-bit ARM with cmake and generates its bindings
  # with bindgen (libclang).
  cmake libclang-dev clang
  file
)
ZIGLANG_VERSION=0.17.1
ZIGBUILD_VERSION=0.24.1

die() {
  echo "cross.sh: $*" >&2
  exit 1
}

in_list() {
  local x=$1
  shift
  local y
  for y in "$@"; do [ "$x" = "$y" ] && return 0; done
  return 1
}

# The environment one target builds with: Debian's cross gcc as linker and
# C compiler for glibc, the qemu runner for the emulated targets.
target_env() {
  local t=$1 upper under
  upper=$(echo "$t" | tr 'a-z-' 'A-Z_')
  under=${t//-/_}
  case "$t" in
    aarch64-unknown-linux-gnu)
      export "CARGO_TARGET_${upper}_LINKER=aarch64-linux-gnu-gcc"
      export "CC_${under}=aarch64-linux-gnu-gcc" "AR_${under}=aarch64-linux-gnu-ar"
      export "CARGO_TARGET_${upper}_RUNNER=$PWD/scripts/qemu-runner.sh aarch64"
      ;;
    armv7-unknown-linux-gnueabihf)
      export "CARGO_TARGET_${upper}_LINKER=arm-linux-gnueabihf-gcc"
      export "CC_${under}=arm-linux-gnueabihf-gcc" "AR_${under}=arm-linux-gnueabihf-ar"
      export "CARGO_TARGET_${upper}_RUNNER=$PWD/scripts/qemu-runner.sh arm"
      ;;
  esac
}

# A musl build is one static executable without a dynamic loader. Not
# position-independent (x86-64's default is static-pie): nothing has to
# relocate it at start, and `file` calls it what it is, statically linked.
static_env() {
  local upper
  upper=$(echo "$1" | tr 'a-z-' 'A-Z_')
  export "CARGO_TARGET_${upper}_RUSTFLAGS=-C relocation-model=static${2:+ $2}"
}

# The cargo command line that builds (or lints) for one target.
cargo_for() {
  local t=$1
  shift
  local sub=$1
  shift
  if in_list "$t" "${GLIBC_TARGETS[@]}"; then
    target_env "$t"
    cargo "$sub" --locked --target "$t" "$@"
  elif in_list "$t" "${MUSL_TARGETS[@]}"; then
    [ "$sub" = build ] && sub=zigbuild
    static_env "$t"
    cargo-zigbuild "$sub" --locked --target "$t" "$@"
  elif in_list "$t" "${BUILD_STD_TARGETS[@]}"; then
    [ "$sub" = build ] && sub=zigbuild
    # Without rust-std's self-contained crt objects (built from source
    # there are none), zig's own musl start files are linked.
    static_env "$t" "-C link-self-contained=no"
    # cargo-zigbuild runs the toolchain rustup resolves here.
    RUSTUP_TOOLCHAIN=nightly cargo-zigbuild "$sub" --locked --target "$t" \
      -Zbuild-std=std,panic_abort "$@"
  else
    die "unknown target '$t' (known: ${ALL_TARGETS[*]})"
  fi
}

setup_binfmt() {
  # qemu-user-binfmt registers the ARM interpreters, so a spawned ARM child
  # (spawn's static no-op helper, a test's child) runs too; the glibc
  # targets' dynamic children find their C library through /etc/qemu-binfmt.
  if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
      die "cannot mount binfmt_misc: spawned ARM children would not run"
  fi
  update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
  update-binfmts --enable qemu-arm >/dev/null 2>&1 || true
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || die "qemu-aarch64 is not registered with binfmt_misc"
  [ -e /proc/sys/fs/binfmt_misc/qemu-arm ] || die "qemu-arm is not registered with binfmt_misc"
  mkdir -p /etc/qemu-binfmt
  ln -sfn /usr/aarch64-linux-gnu /etc/qemu-binfmt/aarch64
  ln -sfn /usr/arm-linux-gnueabihf /etc/qemu-binfmt/arm
}

cmd_setup() {
  [ "$(id -u)" = 0 ] || die "setup installs packages and registers binfmt handlers: run it as root"
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
  rustup target add "${GLIBC_TARGETS[@]}" "${MUSL_TARGETS[@]}"
  rustup component add rust-src --toolchain nightly
  python3 -m ziglang version >/dev/null 2>&1 ||
    python3 -m pip install --quiet --root-user-action=ignore "ziglang==$ZIGLANG_VERSION"
  # PyPI ships cargo-zigbuild built (seconds, not a compile of minutes).
  command -v cargo-zigbuild >/dev/null 2>&1 ||
    python3 -m pip install --quiet --root-user-action=ignore "cargo-zigbuild==$ZIGBUILD_VERSION" ||
    cargo install --locked cargo-zigbuild
  hash -r
  command -v bindgen >/dev/null 2>&1 || cargo install --locked bindgen-cli
  setup_binfmt
}

# Set by --lint: the environment under which cargo lints the workspace's
# crates while it builds them (as cargo-clippy sets it).
LINT_ENV=()
lint_on() {
  LINT_ENV=(RUSTC_WORKSPACE_WRAPPER=clippy-driver "CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__")
}
lint_env() {
  if [ "${#LINT_ENV[@]}" -gt 0 ]; then export "${LINT_ENV[@]}"; fi
}

# The directory under target/TARGET/ that cargo puts a profile's output in.
profile_dir() {
  if [ "$1" = dev ]; then echo debug; else echo "$1"; fi
}

cmd_build() {
  local profile=release targets=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --profile) profile=${2:?--profile needs a name}; shift 2 ;;
      --lint) lint_on; shift ;;
      *) targets+=("$1"); shift ;;
    esac
  done
  [ "${#targets[@]}" -gt 0 ] || targets=("${ALL_TARGETS[@]}")
  local dir t
  dir=$(profile_dir "$profile")
  for t in "${targets[@]}"; do
    echo "== build $t ($profile${LINT_ENV:+, linted}) [${SECONDS} s into cross.sh]"
    (lint_env && cargo_for "$t" build --profile "$profile" -p sysgauge)
    file "${CARGO_TARGET_DIR:-target}/$t/$dir/sysgauge"
  done
}

cmd_clippy() {
  local targets=("$@") t
  [ "${#targets[@]}" -gt 0 ] || targets=("${ALL_TARGETS[@]}")
  for t in "${targets[@]}"; do
    echo "== clippy $t [${SECONDS} s into cross.sh]"
    (cargo_for "$t" clippy --workspace --all-targets -- -D warnings)
  done
}

cmd_test() {
  local targets=() crates=() t
  while [ $# -gt 0 ]; do
    case "$1" in
      --lint) lint_on; shift ;;
      -p) crates+=(-p "${2:?-p needs a crate}"); shift 2 ;;
      *) targets+=("$1"); shift ;;
    esac
  done
  [ "${#targets[@]}" -gt 0 ] || targets=("${EMULATED_TARGETS[@]}")
  [ "${#crates[@]}" -gt 0 ] || crates=(--workspace)
  for t in "${targets[@]}"; do
    in_list "$t" "${EMULATED_TARGETS[@]}" || die "$t is not tested under qemu-user (${EMULATED_TARGETS[*]} are)"
    echo "== unit tests $t (qemu-user${LINT_ENV:+, linted}) [${SECONDS} s into cross.sh]"
    (lint_env && cargo_for "$t" test "${crates[@]}" --lib)
    if [ "${crates[0]}" = --workspace ]; then
      (lint_env && cargo_for "$t" build -p sysgauge)
      tiny_run "$t" debug ""
    fi
  done
}

cmd_tiny() {
  local profile=dev cpu="" targets=() t dir
  while [ $# -gt 0 ]; do
    case "$1" in
      --cpu) cpu=${2:?--cpu needs a qemu CPU model}; shift 2 ;;
      --profile) profile=${2:?--profile needs a name}; shift 2 ;;
      *) targets+=("$1"); shift ;;
    esac
  done
  [ "${#targets[@]}" -gt 0 ] || die "tiny needs the targets whose built binary to run"
  dir=$(profile_dir "$profile")
  for t in "${targets[@]}"; do
    tiny_run "$t" "$dir" "$cpu"
  done
}

# `sysgauge run --profile tiny` of the binary built for target $1 (profile
# directory $2) under qemu-user, on qemu's CPU model $3 when given (an ARMv6
# build on the first Pi's core proves it uses no later instructions).
tiny_run() {
  local t=$1 dir=$2 cpu=$3 tmp bin
  bin="${CARGO_TARGET_DIR:-target}/$t/$dir/sysgauge"
  [ -x "$bin" ] || die "no binary for $t at $bin: build it first"
  echo "== tiny run $t (qemu-user${cpu:+, CPU $cpu}) [${SECONDS} s into cross.sh]"
  tmp=$(mktemp -d)
  # Every family must measure or skip with a reason; spawn's static
  # helper and /bin/true are spawned through binfmt_misc.
  # QEMU_CPU reaches the children started through binfmt_misc too.
  (target_env "$t" && if [ -n "$cpu" ]; then export QEMU_CPU=$cpu; fi &&
    SYSGAUGE_EMULATOR=qemu-user scripts/qemu-runner.sh "$(qemu_arch "$t")" "$bin" \
    run --no-wait --profile tiny --db "$tmp/tiny.db" --scratch-dir "$tmp" --json "$tmp/run.json" >"$tmp/out.txt") ||
    { cat "$tmp/out.txt"; rm -rf "$tmp"; die "the tiny run on $t failed"; }
  check_tiny_run "$t" "$tmp/run.json"
  rm -rf "$tmp"
}

qemu_arch() {
  case "$1" in
    aarch64-*) echo aarch64 ;;
    arm*) echo arm ;;
    *) die "no qemu for $1" ;;
  esac
}

# The tiny run: flagged as measuring the emulator, every family measured
# something, no case failed, and every skipped case says why.
check_tiny_run() {
  local t=$1 json=$2
  python3 - "$t" "$json" <<'EOF'
import json, sys
target, path = sys.argv[1], sys.argv[2]
record = json.load(open(path))
results = record["results"]
# Under qemu-user the run must say that it measured the emulator.
if record["host"]["cpu"].get("virtualization") != "qemu-user" or not any(
        f["code"] == "user-mode-emulated" for f in record["findings"]):
    sys.exit(f"{target}: the run under qemu-user is not flagged as emulated")
# No capacity probe under emulation: it would time the emulator.
if any("capacity" in (r.get("details") or {}) for r in results):
    sys.exit(f"{target}: the run under qemu-user probed its capacity")
ok, skipped, failed = {}, [], []
for r in results:
    kind = r["status"]["kind"]
    if kind == "ok":
        ok[r["family"]] = ok.get(r["family"], 0) + 1
    elif kind == "skipped":
        skipped.append(f'{r["bench_id"]}: {r["status"]["reason"]}')
    else:
        failed.append(f'{r["bench_id"]}: {r["status"].get("error")}')
print(f"{target}: measured " + ", ".join(f"{f} {n}" for f, n in sorted(ok.items())))
for s in skipped:
    print(f"{target}: skipped {s}")
missing = [f for f in ["clock", "hash", "crypto", "cpu", "mem", "disk", "sweep", "spawn", "net"] if f not in ok]
if failed or missing:
    sys.exit(f"{target}: failed cases {failed}; families with nothing measured {missing}")
EOF
}

sub=${1:-}
[ $# -gt 0 ] && shift
case "$sub" in
  setup) cmd_setup "$@" ;;
  build) cmd_build "$@" ;;
  clippy) cmd_clippy "$@" ;;
  test) cmd_test "$@" ;;
  tiny) cmd_tiny "$@" ;;
  *) die "usage: scripts/cross.sh setup | build [--lint] [--profile P] [TARGET...] | clippy [TARGET...] | test [--lint] [-p CRATE]... [TARGET...] | tiny [--cpu C] [--profile P] TARGET..." ;;
esac
