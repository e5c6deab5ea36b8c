#!/usr/bin/env bash
# Measurement overhead of `sysgauge ssh`: its transfer throughput for one
# cipher against timing the by-hand pipeline
#     head -c SIZE /dev/zero | ssh ... 'cat > /dev/null'
# against the same private sshd on 127.0.0.1, interleaved round by round
# (sysgauge, hand, sysgauge, hand, ...). The by-hand time includes the
# handshake and the remote shell's start-up, which sysgauge leaves out, so
# the hand figure is computed both raw and with the time of
# `ssh ... true` (measured right before each pipeline) subtracted.
#
# Usage: scripts/ssh-overhead.sh   (as root or any user with sshd installed)
#   SYSGAUGE=target/release/sysgauge SIZE=1000000000 ROUNDS=5 RUNS=3
#   CIPHER=aes256-gcm@openssh.com
# Run it under `chrt -f 10` on a shared machine to keep other load out.
set -euo pipefail
SYSGAUGE=${SYSGAUGE:-target/release/sysgauge}
SIZE=${SIZE:-1000000000}
ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-3}
CIPHER=${CIPHER:-aes256-gcm@openssh.com}
KEX=curve25519-sha256
MAC=umac-128-etm@openssh.com

dir=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

user=$(id -un)
for t in ed25519 ecdsa rsa; do ssh-keygen -q -t $t -N '' -f "$dir/host_$t" -C host; done
ssh-keygen -q -t ed25519 -N '' -f "$dir/id" -C client
cp "$dir/id.pub" "$dir/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
[ "$(id -u)" = 0 ] && mkdir -p /run/sshd
cat > "$dir/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_ed25519
HostKey $dir/host_ecdsa
HostKey $dir/host_rsa
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
AllowUsers $user
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Ciphers $(ssh -Q cipher | paste -sd,)
MACs $(ssh -Q mac | paste -sd,)
KexAlgorithms $(ssh -Q kex | paste -sd,)
EOF
/usr/sbin/sshd -D -f "$dir/sshd_config" -E "$dir/sshd.log" &
pid=$!
for _ in $(seq 100); do grep -q "Server listening" "$dir/sshd.log" 2>/dev/null && break; sleep 0.05; done
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$dir/host_ed25519.pub")" > "$dir/known_hosts"
cat > "$dir/ssh_config" <<EOF
Host *
  IdentityFile $dir/id
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile $dir/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
EOF
ssh_hand=(ssh -F "$dir/ssh_config" -T -e none -o BatchMode=yes -o Compression=no
  -o ControlMaster=no -o ControlPath=none -p "$port" -l "$user"
  -c "$CIPHER" -o "KexAlgorithms=$KEX")

ours=()
hand=()
raw=()
for r in $(seq "$ROUNDS"); do
  "$SYSGAUGE" ssh --host "$user@127.0.0.1:$port" --ssh-config "$dir/ssh_config" \
    --cipher "$CIPHER" --mac "$MAC" --kex "$KEX" --size "$SIZE" --runs "$RUNS" \
    --no-store --json "$dir/run.json" >/dev/null 2>"$dir/sysgauge.err" ||
    { cat "$dir/sysgauge.err"; exit 1; }
  mapfile -t s < <(python3 -c '
import json, sys
run = json.load(open(sys.argv[1]))
for r in run["results"]:
    if r["bench_id"] == "ssh.transfer" and r["params"]["cipher"] == sys.argv[2]:
        print("\n".join("%.3f" % v for v in r["metrics"][0]["samples"]))
' "$dir/run.json" "$CIPHER")
  ours+=("${s[@]}")
  for _ in $(seq "$RUNS"); do
    t0=$EPOCHREALTIME
    "${ssh_hand[@]}" 127.0.0.1 true
    t1=$EPOCHREALTIME
    head -c "$SIZE" /dev/zero | "${ssh_hand[@]}" 127.0.0.1 'cat > /dev/null'
    t2=$EPOCHREALTIME
    hand+=("$(python3 -c "print('%.3f' % ($SIZE / 1e6 / (($t2 - $t1) - ($t1 - $t0))))")")
    raw+=("$(python3 -c "print('%.3f' % ($SIZE / 1e6 / ($t2 - $t1)))")")
  done
  echo "round $r: sysgauge ${s[*]} | hand minus handshake ${hand[*]: -$RUNS} | hand raw ${raw[*]: -$RUNS}"
done
python3 - "${#ours[@]}" "${ours[@]}" "${hand[@]}" "${raw[@]}" <<'EOF'
import statistics, sys
n = int(sys.argv[1]); v = [float(x) for x in sys.argv[2:]]
ours, hand, raw = v[:n], v[n:2 * n], v[2 * n:]
m = statistics.median
print(f"median MB/s: sysgauge {m(ours):.1f}, by hand minus handshake {m(hand):.1f}, by hand raw {m(raw):.1f}")
print(f"sysgauge / (hand minus handshake) = {m(ours) / m(hand):.3f}; sysgauge / raw = {m(ours) / m(raw):.3f}")
EOF
