#!/usr/bin/env bash
# Installs the Debian package built by scripts/package-deb.sh with dpkg -i,
# checks that `sysgauge --version`, `man sysgauge`, the completions and the
# disabled sysgauge-serve service are right in the installed files, and removes the package again (also on failure).
# Needs root and dpkg (Debian 12 or later).
#
# Usage: scripts/check-deb.sh [--clean-root] target/debian/sysgauge_*.deb
#
# --clean-root: install into a fresh minimal Debian 12 made for the check
# (debootstrap --variant=minbase, with man-db and bash-completion, which a
# user who wants man pages and completions has), instead of this machine,
# and remove it after. Needs debootstrap and the Debian mirror.
set -euo pipefail
clean_root=0
if [ "${1:-}" = --clean-root ]; then
  clean_root=1
  shift
fi
deb=${1:?usage: scripts/check-deb.sh [--clean-root] PACKAGE.deb}

# The checks, run where the package is installed (here or in the chroot).
checks='
set -euo pipefail
version=$(/usr/bin/sysgauge --version)
echo "$version" | grep -q "^sysgauge " || { echo "check-deb: --version said: $version" >&2; exit 1; }
echo "$version" | grep -q "^target: " || { echo "check-deb: --version names no target" >&2; exit 1; }
echo "$version" | sed "s/^/  /"
MANPAGER=cat MANWIDTH=100 man sysgauge 2>/dev/null | grep -q "compare machines honestly" \
  || { echo "check-deb: man sysgauge does not show the page" >&2; exit 1; }
MANPAGER=cat MANWIDTH=100 man sysgauge-fleet 2>/dev/null | grep -q "sysgauge fleet" \
  || { echo "check-deb: man sysgauge-fleet does not show the page" >&2; exit 1; }
bash -c "source /usr/share/bash-completion/completions/sysgauge && complete -p sysgauge" | grep -q "_sysgauge" \
  || { echo "check-deb: the bash completion does not register" >&2; exit 1; }
test -s /usr/share/zsh/vendor-completions/_sysgauge
test -s /usr/share/fish/vendor_completions.d/sysgauge.fish
# The results site service: installed, disabled, its user made, its unit valid.
unit=/lib/systemd/system/sysgauge-serve.service
test -s "$unit" || { echo "check-deb: no $unit" >&2; exit 1; }
grep -q "^SYSGAUGE_SERVE_ARGS=" /etc/default/sysgauge-serve \
  || { echo "check-deb: /etc/default/sysgauge-serve sets no SYSGAUGE_SERVE_ARGS" >&2; exit 1; }
! ls /etc/systemd/system/*.wants/sysgauge-serve.service >/dev/null 2>&1 \
  || { echo "check-deb: sysgauge-serve is enabled on install" >&2; exit 1; }
getent passwd sysgauge >/dev/null || { echo "check-deb: no sysgauge system user" >&2; exit 1; }
if command -v systemd-analyze >/dev/null 2>&1; then
  problems=$(systemd-analyze verify "$unit" 2>&1 | grep -v "man sysgauge-serve" || true)
  [ -z "$problems" ] || { echo "check-deb: systemd-analyze verify $unit: $problems" >&2; exit 1; }
fi
MANPAGER=cat MANWIDTH=100 man sysgauge-serve 2>/dev/null | grep -q "sysgauge serve" \
  || { echo "check-deb: man sysgauge-serve does not show the page" >&2; exit 1; }
/usr/bin/sysgauge serve --help | grep -q -- "--listen" \
  || { echo "check-deb: sysgauge serve --help names no --listen" >&2; exit 1; }
'

if [ "$clean_root" = 1 ]; then
  command -v debootstrap >/dev/null 2>&1 || { echo "check-deb: --clean-root needs debootstrap" >&2; exit 1; }
  root=$(mktemp -d /var/tmp/sysgauge-deb-root.XXXXXX)
  # A system root is world-readable: man-db's trigger runs as user man.
  chmod 755 "$root"
  cleanup() {
    umount "$root/proc" 2>/dev/null || true
    umount "$root/dev" 2>/dev/null || true
    rm -rf --one-file-system "$root"
  }
  trap cleanup EXIT
  debootstrap --variant=minbase --include=man-db,bash-completion bookworm "$root" \
    http://deb.debian.org/debian >"$root.log" 2>&1 ||
    { tail -20 "$root.log" >&2; rm -f "$root.log"; echo "check-deb: debootstrap failed" >&2; exit 1; }
  rm -f "$root.log"
  mount -t proc proc "$root/proc"
  mount --bind /dev "$root/dev"
  cp "$deb" "$root/tmp/sysgauge.deb"
  chroot "$root" dpkg -i /tmp/sysgauge.deb >/dev/null
  chroot "$root" bash -c "$checks"
  echo "check-deb: $(basename "$deb") installs on a fresh Debian 12 (minbase); --version, man pages and completions work"
  exit 0
fi

if dpkg-query -W -f='${Status}' sysgauge 2>/dev/null | grep -q " installed$"; then
  echo "check-deb: a sysgauge package is already installed; not touching it" >&2
  exit 1
fi
# Purged, not only removed: /etc/default/sysgauge-serve is a conffile.
trap 'dpkg -P sysgauge >/dev/null 2>&1 || true' EXIT
dpkg -i "$deb" >/dev/null
bash -c "$checks"
echo "check-deb: $(basename "$deb") installs; --version, man pages and completions work"
