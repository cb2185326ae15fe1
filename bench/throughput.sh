#!/usr/bin/env bash
# Throughput of kbv on a corpus (issue 14): evaluates CORPUS into a fresh results DB with
# `kbv run`, then prints verdicts an hour, where an evaluation's time went, the share of speedups
# whose 95% CI is within +-1%, and the build CPU seconds per candidate source.
#
#   bench/throughput.sh CORPUS [kbv run options...]
#
# CORPUS holds problems/ (level folders of KernelBench problem files) and runs/ (one folder per
# model of level_<L>_problem_<id>_sample_<k>_kernel.py files), as the repository root does.
# Options go to `kbv run` (default: --protocol standard,verified,strict). KBV (the kbv binary,
# default build/bin/kbv or build-gpu/bin/kbv) and OUT (where the DB and the log go, default a
# new folder under /tmp) may be set; LIMIT (seconds) stops the run there as Ctrl-C would (its
# verdicts so far are kept and counted). Record the figures it prints in bench/RESULTS.md with the
# date and the machine.
set -euo pipefail
corpus="${1:?usage: bench/throughput.sh CORPUS [kbv run options...]}"
shift
[ -d "$corpus/problems" ] && [ -d "$corpus/runs" ] || { echo "$corpus needs problems/ and runs/" >&2; exit 2; }
here="$(cd "$(dirname "$0")/.." && pwd)"
kbv="${KBV:-}"
if [ -z "$kbv" ]; then
  for b in "$here/build/bin/kbv" "$here/build-gpu/bin/kbv"; do [ -x "$b" ] && kbv="$b"; done
fi
[ -x "$kbv" ] || { echo "no kbv binary: build it, or set KBV" >&2; exit 2; }
out="${OUT:-$(mktemp -d /tmp/kbv-throughput-XXXXXX)}"
mkdir -p "$out"
db="$out/throughput.db"
rm -f "$db" "$db-wal" "$db-shm"
args=("$@")
[[ " ${args[*]-} " == *" --protocol "* ]] || args+=(--protocol standard,verified,strict)

start=$(date +%s.%N)
limit=()
[ -n "${LIMIT:-}" ] && limit=(timeout -s INT -k 30 "$LIMIT")
"${limit[@]}" "$kbv" run --problems "$corpus/problems" --runs "$corpus/runs" --db "$db" "${args[@]}" >"$out/run.log" 2>&1 || true
end=$(date +%s.%N)
grep -E "^kbv run: (build phase|evaluation|[0-9]+ candidates)" "$out/run.log" || true

python3 - "$db" "$start" "$end" <<'PY'
import json, sqlite3, sys

db, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
con = sqlite3.connect(db)
runs = [json.loads(o) for (o,) in con.execute("SELECT options FROM runs ORDER BY id")]
tp = [r.get("throughput", {}) for r in runs if "throughput" in r]
verdicts = [json.loads(v) for (v,) in con.execute("SELECT verdict_json FROM verdicts")]
wall = end - start
n = len(verdicts)
print(f"verdicts: {n} in {wall:.1f} s of wall time: {3600 * n / wall:.0f} an hour (builds included)")
for t in tp:
    if t.get("evaluations"):
        print(f"evaluation phase: {t['evaluations']} in {t['eval_phase_seconds']:.1f} s: "
              f"{3600 * t['evaluations'] / max(t['eval_phase_seconds'], 1e-9):.0f} an hour, "
              f"{t['eval_phase_seconds'] / t['evaluations']:.2f} s each")
    if t.get("builds"):
        print(f"build phase: {t['builds']} sources in {t['build_phase_seconds']:.1f} s wall, {t.get('build_jobs', 0)} at a time; "
              f"{t['build_worker_seconds'] / t['builds']:.1f} s of build-worker time per source (each worker one compile at a time); "
              f"{t.get('builds_cached', 0)} already cached")
        if t.get("build_cpu_seconds"):
            print(f"build CPU: {t['build_cpu_seconds'] / t['builds']:.1f} s per source (user + system, compilers included)")
    if t.get("eval_ahead_seconds"):
        print(f"start-up done ahead of the device's turn (--prestart), overlapped: {t['eval_ahead_seconds']:.1f} s")

stages = {}
for v in verdicts:
    for s, sec in (v.get("stage_seconds") or {}).items():
        stages.setdefault(s, []).append(sec)
if stages:
    # Over every verdict: one judge serving several protocols puts its shared start-up and build
    # on the first one's verdict only.
    print("seconds per verdict, by stage (each stage's total over all verdicts / verdicts):")
    for s, xs in sorted(stages.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {s:<14} {sum(xs) / n:7.3f}  (in {len(xs)} verdicts)")

timed = within = 0
for v in verdicts:
    t = v.get("timing") or {}
    for s in t.get("speedups", []):
        if s.get("baseline") != t.get("primary_baseline") or not s.get("median"):
            continue
        timed += 1
        if (s["ci_high"] - s["ci_low"]) / 2 <= 0.01 * s["median"]:
            within += 1
if timed:
    print(f"speedups within +-1% (95% CI): {within} of {timed} ({100 * within / timed:.0f}%)")
outcomes = {}
for v in verdicts:
    outcomes[v.get("outcome")] = outcomes.get(v.get("outcome"), 0) + 1
print("outcomes: " + ", ".join(f"{k} {c}" for k, c in sorted(outcomes.items())))
PY
echo "DB and log: $out"
