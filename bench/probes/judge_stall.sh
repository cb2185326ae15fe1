#!/usr/bin/env bash
# Probe (session 11): `kbv run` over the split step's examples and hacks (scripts/split_corpus.sh)
# under standard and strict, in the background; every 5 s it prints kbv's last progress line and
# every judge and sandbox process with its state and where it waits in the kernel (wchan), so a
# run that stalls shows which process holds it and where. Usage: judge_stall.sh KBV OUT
set -uo pipefail
kbv="$1"; S="$2"
scripts/split_corpus.sh "$S"
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
