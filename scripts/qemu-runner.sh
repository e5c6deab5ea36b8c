#!/usr/bin/env bash
# Cargo's runner for the ARM targets (scripts/cross.sh sets it): runs a test
# binary or sysgauge itself under qemu-user with the target's C library
# from Debian's cross packages. SYSGAUGE_EMULATOR tells the few tests that
# check what qemu-user cannot give (its own /proc/self/stat, posix_spawn's
# exec error) to skip, each with its reason; every other test runs.
#
# Usage: qemu-runner.sh ARCH PROGRAM [ARGS...]   (ARCH: aarch64 or arm)
set -euo pipefail
arch=${1:?usage: qemu-runner.sh ARCH PROGRAM [ARGS...]}
shift
case "$arch" in
  aarch64) sysroot=/usr/aarch64-linux-gnu ;;
  arm) sysroot=/usr/arm-linux-gnueabihf ;;
  *) echo "qemu-runner.sh: no sysroot known for '$arch' (aarch64, arm)" >&2; exit 2 ;;
esac
export SYSGAUGE_EMULATOR="qemu-user ($arch)"
exec "qemu-$arch" -L "$sysroot" "$@"
