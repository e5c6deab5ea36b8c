#!/usr/bin/env bash
# Builds the Debian package of sysgauge: the release binary, the shell
# completions and man pages it generates from its own command line, and the
# docs. Needs cargo-deb (`cargo install cargo-deb --locked`). Prints the
# path of the .deb. Usage: scripts/package-deb.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo build --locked --release -p sysgauge
bin=target/release/sysgauge
assets=target/release/deb-assets
rm -rf "$assets"
mkdir -p "$assets/man"
"$bin" completions bash > "$assets/sysgauge.bash"
"$bin" completions zsh > "$assets/_sysgauge"
"$bin" completions fish > "$assets/sysgauge.fish"
"$bin" man --dir "$assets/man" 2>/dev/null
gzip -9n "$assets"/man/*.1
cargo deb --locked -p sysgauge --no-build --no-strip --output target/debian/
