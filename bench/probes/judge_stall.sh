#!/usr/bin/env bash
# Probe (session 11): `kbv run` over the split step's examples and hacks (scripts/gpu_check.sh)
# under standard and strict, in the background; every 5 s it prints kbv's last progress line and
# every judge and sandbox process with its state and where it waits in the kernel (wchan), so a
# run that stalls shows which process holds it and where. Usage: judge_stall.sh KBV OUT
set -uo pipefail
kbv="$1"; S="$2"; mkdir -p "$S/suite/level1" "$S/runs/examples" "$S/runs/hacks"
cp examples/problems/level1/{7_Swish,19_ReLU,40_Linear_ReLU}.py problems/level1/8_GELU.py "$S/suite/level1/"
put() { cp "$1" "$S/runs/$2/level_1_problem_$3_sample_$4_kernel.py"; echo "$2 $3 $4 $(basename "$1")" >> "$S/samples.txt"; }
put examples/candidates/swish_cuda.py examples 7 0
put examples/candidates/relu_cuda.py examples 19 0
put examples/candidates/relu_illegal_address.py examples 19 1
put examples/candidates/relu_raw_scratch.py examples 19 2
put examples/candidates/linear_relu_cuda.py examples 40 0
i=0; for h in side_stream side_stream_full_grid side_stream_thread_launch persisting_l2 honest_own_stream stale_memory persistent_kernel; do
  put "examples/hacks/$h.py" hacks 19 $i; i=$((i+1)); done
put runs/demo-gamer/level_1_problem_8_sample_0_kernel.py hacks 8 0
"$kbv" run --problems "$S/suite" --runs "$S/runs" --db "$S/split.db" --protocol standard,strict --time-budget 1 \
  --run-timeout 120 --jobs 16 --build-dir "$S/builds" >"$S/run.log" 2>&1 &
pid=$!
for i in $(seq 1 "${STALL_PROBES:-60}"); do
  sleep 5
  kill -0 "$pid" 2>/dev/null || { echo "kbv run ended after about $((i * 5)) s"; break; }
  echo "--- $((i * 5)) s: $(tr '\r' '\n' < "$S/run.log" | grep -v '^$' | tail -1 | cut -c1-150)"
  ps -eo pid,ppid,etimes,stat,wchan:28,args --sort=pid | grep -E "kbv-(judge|sandbox)" | grep -v grep | cut -c1-170
done
kill -0 "$pid" 2>/dev/null && { echo "still running: killed"; kill -INT "$pid"; sleep 5; }
grep -v "^\[build" "$S/run.log" | tail -12
