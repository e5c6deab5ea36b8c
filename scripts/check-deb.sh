#!/usr/bin/env bash
# Installs the Debian package built by scripts/package-deb.sh with dpkg -i,
# checks that `sysgauge --version`, `man sysgauge` and the bash completion
# work from the installed files, and removes the package again (also on
# failure). Needs root and dpkg (Debian 12 or later).
# Usage: scripts/check-deb.sh target/debian/sysgauge_*.deb
set -euo pipefail
deb=$1
if dpkg -s sysgauge >/dev/null 2>&1; then
  echo "check-deb: a sysgauge package is already installed; not touching it" >&2
  exit 1
fi
trap 'dpkg -r sysgauge >/dev/null 2>&1 || true' EXIT
dpkg -i "$deb" >/dev/null
version=$(/usr/bin/sysgauge --version)
echo "$version" | grep -q "^sysgauge " || { echo "check-deb: --version said: $version" >&2; exit 1; }
echo "$version" | grep -q "^target: " || { echo "check-deb: --version names no target" >&2; exit 1; }
MANPAGER=cat MANWIDTH=100 man sysgauge | grep -q "compare machines honestly" \
  || { echo "check-deb: man sysgauge does not show the page" >&2; exit 1; }
MANPAGER=cat MANWIDTH=100 man sysgauge-fleet | grep -q "sysgauge fleet" \
  || { echo "check-deb: man sysgauge-fleet does not show the page" >&2; exit 1; }
bash -c 'source /usr/share/bash-completion/completions/sysgauge && complete -p sysgauge' | grep -q "_sysgauge" \
  || { echo "check-deb: the bash completion does not register" >&2; exit 1; }
test -s /usr/share/zsh/vendor-completions/_sysgauge
test -s /usr/share/fish/vendor_completions.d/sysgauge.fish
echo "check-deb: $(basename "$deb") installs; --version, man pages and completions work"
