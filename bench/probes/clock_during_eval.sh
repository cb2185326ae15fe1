#!/usr/bin/env bash
# Does the SM clock move between evaluations, and with it a compute-bound baseline? (session 18)
# bench/corpus-l1 problem 6's eager_tf32_off baseline (cuDNN, compute-bound) read 1.805 ms in some
# verdicts and 1.92 ms in others, each with a +-0.3% CI, while the candidate (memory-bound) read
# 4.73 ms in all. This evaluates one candidate N times with `kbv eval` while nvidia-smi logs the
# clocks every 100 ms, and prints each evaluation's series medians beside the clocks seen during it.
#   bench/probes/clock_during_eval.sh KBV PROBLEM CANDIDATE OUTDIR [N] [kbv eval options...]
set -uo pipefail
kbv=$1 problem=$2 candidate=$3 out=$4 n=${5:-5}; shift 5 || shift $#
mkdir -p "$out"
nvidia-smi -q -d CLOCK,PERFORMANCE,POWER,TEMPERATURE > "$out/nvidia-smi-q.txt" 2>&1
reasons=clocks_event_reasons.active
nvidia-smi --query-gpu=$reasons --format=csv >/dev/null 2>&1 || reasons=clocks_throttle_reasons.active
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,$reasons \
  --format=csv,noheader,nounits -lms 100 > "$out/clocks.csv" 2>"$out/clocks.err" &
logger=$!
"$kbv" eval "$problem" "$candidate" --device cuda:0 --no-timing --quiet --build-dir /tmp/kbv-clock-builds >/dev/null 2>&1  # build first
for i in $(seq 1 "$n"); do
  s=$(date +%s.%N)
  "$kbv" eval "$problem" "$candidate" --device cuda:0 --json "$out/v$i.json" --quiet --build-dir /tmp/kbv-clock-builds "$@" >/dev/null 2>&1
  echo "$i $s $(date +%s.%N)" >> "$out/windows.txt"
done
kill "$logger"
python3 - "$out" <<'PY'
import datetime, json, statistics, sys
out = sys.argv[1]
rows = []
for line in open(f"{out}/clocks.csv"):
    f = [x.strip() for x in line.split(",")]
    try:
        t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((t, float(f[1]), float(f[3]), float(f[4]), f[5]))
    except (ValueError, IndexError):
        pass
for line in open(f"{out}/windows.txt"):
    i, s, e = line.split()
    v = json.load(open(f"{out}/v{i}.json"))
    t = v.get("timing") or {}
    ser = {x["name"]: round(x["median_ms"], 4) for x in t.get("series", [])}
    w = [r for r in rows if float(s) <= r[0] <= float(e)]
    busy = [r for r in w if r[2] > 150]  # samples while the device drew power: the timed part
    def span(k):
        xs = [r[k] for r in busy] or [0]
        return f"{min(xs):.0f}-{statistics.median(xs):.0f}-{max(xs):.0f}"
    print(f"eval {i}: {v['outcome']} series {ser}; busy samples {len(busy)}/{len(w)}: SM MHz {span(1)}, "
          f"W {span(2)}, C {span(3)}, reasons {sorted({r[4] for r in busy})}")
PY
