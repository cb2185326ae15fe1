#!/usr/bin/env bash
# Probe (session 11): a kbv run that stalls on the GPU. Runs a small corpus in the background and,
# every 5 s, prints kbv's last progress line and every judge and sandbox process with where it
# waits (wchan; gdb's stacks of the judges when gdb exists). Usage: judge_stall.sh KBV OUT
set -uo pipefail
kbv="$1"; out="$2"; mkdir -p "$out/suite/level1" "$out/runs/m"
cp examples/problems/level1/19_ReLU.py "$out/suite/level1/"
cp examples/candidates/relu_illegal_address.py "$out/runs/m/level_1_problem_19_sample_0_kernel.py"
cp examples/candidates/relu_cuda.py "$out/runs/m/level_1_problem_19_sample_1_kernel.py"
cp examples/hacks/side_stream.py "$out/runs/m/level_1_problem_19_sample_2_kernel.py"
"$kbv" run --problems "$out/suite" --runs "$out/runs" --db "$out/stall.db" --protocol standard,strict --time-budget 0.5 \
  --run-timeout 60 --compile-timeout 200 --jobs 16 --torch-pch off --build-dir "$out/builds" >"$out/run.log" 2>&1 &
pid=$!
for i in $(seq 1 "${STALL_PROBES:-60}"); do
  sleep 5
  kill -0 "$pid" 2>/dev/null || { echo "kbv run ended after $((i * 5)) s"; break; }
  echo "--- $((i * 5)) s: $(tr '\r' '\n' < "$out/run.log" | grep -v '^$' | tail -1)"
  ps -eo pid,ppid,etimes,stat,wchan:24,args --sort=pid | grep -E "kbv-(judge|sandbox)" | grep -v grep | cut -c1-200
done
if kill -0 "$pid" 2>/dev/null && command -v gdb >/dev/null; then
  for j in $(pgrep -f "kbv-judge"); do echo "=== gdb $j"; gdb -p "$j" -batch -ex "thread apply all bt 12" 2>/dev/null | grep -E "^#|^Thread" | head -60; done
fi
grep -v "^\[build" "$out/run.log" | tail -15
tr '\r' '\n' < "$out/run.log" | grep "eval [0-9]" | tail -8
