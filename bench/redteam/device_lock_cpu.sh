#!/usr/bin/env bash
# Red team of the device lock (src/orchestrate/device_lock.cpp, 2026-12-06), on the CPU, in a lock
# directory of its own (never the shared /tmp/kbv-device-locks). Each step prints what happened.
#   bench/redteam/device_lock_cpu.sh [kbv-binary-dir]     (default build/bin)
# Needs root for step 4 (a file planted by "another user", nobody).
set -u
BIN=$(realpath "${1:-build/bin}")
cd "$(dirname "$0")/../.."
W=$(mktemp -d /tmp/kbv-lock-redteam-XXXXXX)
chmod 755 "$W"  # searchable by the sandbox's uid, as /tmp/kbv-device-locks (01777) is
export KBV_LOCK_DIR=$W/locks
mkdir -p "$KBV_LOCK_DIR"
P=examples/problems/level1/19_ReLU.py
printf 'import torch, torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n' > "$W/relu.py"
ev() { local c=$1; shift; nice "$BIN/kbv" eval "$P" "$c" --device cpu --quiet "$@"; }
secs() { local s=$(date +%s.%N); "$@"; echo "rc=$? $(echo "$(date +%s.%N)-$s" | bc) s"; }

echo "1. squatter: KBV_SANDBOX_NAMESPACES=0, a candidate leaves a process that holds a shared flock"
sed "s#^LOCK_DIRS = .*#LOCK_DIRS = [\"$KBV_LOCK_DIR\"]#; s#^SQUAT_SECONDS = .*#SQUAT_SECONDS = 30#" \
  examples/attacks/device_lock_squat.py > "$W/squat.py"
ev "$W/squat.py" --time-budget 0.5 --json "$W/squat.json"
KBV_SANDBOX_NAMESPACES=0 ev "$W/squat.py" --time-budget 0.5 --json "$W/squat0.json"
grep -ho 'ATTACK[^"]*' "$W/squat.json" "$W/squat0.json"; ps -eo pid,ppid,comm | grep kbv-lock
echo "   a timed eval after it (20 s limit):"; secs timeout 20 "$BIN/kbv" eval "$P" "$W/relu.py" --device cpu --quiet --time-budget 0.5 --json "$W/after.json"
sleep 12

echo "2. writer starvation: two overlapping shared holders (untimed evals) keep a timed eval out"
( e=$((SECONDS+30)); while [ $SECONDS -lt $e ]; do flock -s "$KBV_LOCK_DIR/cpu.lock" sleep 2; done ) & A=$!
sleep 1
( e=$((SECONDS+30)); while [ $SECONDS -lt $e ]; do flock -s "$KBV_LOCK_DIR/cpu.lock" sleep 2; done ) & B=$!
sleep 0.5; secs ev "$W/relu.py" --time-budget 0.5 --json "$W/starved.json"; wait $A $B

echo "3. split lock: the file unlinked while held; the next timed eval runs beside the holder"
flock "$KBV_LOCK_DIR/cpu.lock" sleep 15 & H=$!; sleep 0.5
rm "$KBV_LOCK_DIR/cpu.lock"; secs ev "$W/relu.py" --time-budget 0.5 --json "$W/split.json"; kill $H; wait $H 2>/dev/null

echo "4. planted link: a lock dir of another user's, cpu.lock -> a file kbv (root) then creates 0666"
mkdir -p "$W/evil" "$W/target"; ln -s "$W/target/created-by-kbv" "$W/evil/cpu.lock"
chown -h nobody "$W/evil/cpu.lock" 2>/dev/null; chown nobody "$W/evil" 2>/dev/null
KBV_LOCK_DIR=$W/evil ev "$W/relu.py" --no-timing --json "$W/sym.json"; ls -l "$W/target"

echo "5. unusable lock dir: every kbv eval fails without a verdict"
touch "$W/notadir"; KBV_LOCK_DIR=$W/notadir "$BIN/kbv" eval "$P" "$W/relu.py" --device cpu --no-timing --json "$W/nd.json"
echo "rc=$? json: $(ls "$W/nd.json" 2>&1)"
echo "work dir: $W"
