#!/usr/bin/env bash
# Probe (session 13): where a judge hangs after its candidate's illegal memory access. `kbv run`
# of examples/candidates/relu_illegal_address.py (and relu_cuda.py as a control) under the given
# protocols; every 3 s it prints kbv's progress and, for every judge that has been running (state
# R) since the last probe, its main thread's native stack: SIGUSR2 with KBV_JUDGE_STACKS set makes
# kbv-judge write it (backtrace(3)); its own frames are named with addr2line.
# Usage: illegal_address_stack.sh KBV OUT PROTOCOLS [SECONDS]
set -uo pipefail
kbv="$1"; S="$2"; protocols="$3"; seconds="${4:-120}"
mkdir -p "$S/suite/level1" "$S/runs/x"
cp examples/problems/level1/19_ReLU.py "$S/suite/level1/"
cp examples/candidates/relu_illegal_address.py "$S/runs/x/level_1_problem_19_sample_0_kernel.py"
cp examples/candidates/relu_cuda.py "$S/runs/x/level_1_problem_19_sample_1_kernel.py"
mkdir -p "$S/stacks"
KBV_JUDGE_STACKS="$S/stacks" "$kbv" run --problems "$S/suite" --runs "$S/runs" --db "$S/kbv.db" --protocol "$protocols" --time-budget 0.5 \
  --run-timeout 40 --jobs 4 --build-dir "${KBV_PROBE_BUILDS:-$S/builds}" >"$S/run.log" 2>&1 &
pid=$!
stack() {  # PID: the main thread's frames, kbv-judge's named
  kill -USR2 "$1"; sleep 1
  while IFS= read -r line; do
    off=$(sed -n 's/.*kbv-judge(+\(0x[0-9a-f]*\)).*/\1/p' <<<"$line")
    if [ -n "$off" ]; then echo "$line  $(addr2line -f -C -e "$(dirname "$kbv")/kbv-judge" "$off" | head -1 | cut -c1-150)"
    else echo "$line"; fi
  done < "$S/stacks/judge-$1.stack"
  rm -f "$S/stacks/judge-$1.stack"
}
declare -A seen
for i in $(seq 1 $((seconds / 3))); do
  sleep 3
  kill -0 "$pid" 2>/dev/null || { echo "kbv run ended after about $((i * 3)) s"; break; }
  echo "--- $((i * 3)) s: $(tr '\r' '\n' < "$S/run.log" | grep -v '^$' | tail -1 | cut -c1-150)"
  ps -eo pid,ppid,etimes,stat,wchan:28,args --sort=pid | grep -E "kbv-(judge|sandbox)" | grep -v grep | cut -c1-150
  for j in $(ps -eo pid,stat,args | awk '$2 ~ /^R/ && $3 ~ /kbv-judge/ {print $1}'); do
    if [ -n "${seen[$j]:-}" ] && [ "${seen[$j]}" -lt 3 ]; then echo "=== stack of judge $j"; stack "$j"; fi
    seen[$j]=$(( ${seen[$j]:-0} + 1 ))
  done
done
kill -0 "$pid" 2>/dev/null && { echo "still running: killed"; kill -INT "$pid"; sleep 5; }
grep -v "^\[build" "$S/run.log" | tail -15
"$kbv" report --db "$S/kbv.db" --csv "$S/verdicts.csv" --quiet 2>/dev/null; cut -d, -f1-14 "$S/verdicts.csv" 2>/dev/null
