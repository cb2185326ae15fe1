#!/usr/bin/env bash
# CPU timing beside other load (issue 35): Model's own reduction as ModelNew
# (tests/integration/fixtures/burner/mse_identical.py) against its problem, with 0, 1 and one per
# core busy loops beside kbv. Prints, per run, the speedup word and CI and the share of the
# baselines' time the judge's threads waited for a core (timing.cpu_wait_share): above 0.1 the
# judge calls the host contended and every speedup UNSURE. Record the figures in bench/RESULTS.md
# with the date and the machine.
#
#   bench/cpu_contention.sh [REPEATS]      # default 2; KBV=path/to/kbv
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
kbv="${KBV:-$here/build/bin/kbv}"
[ -x "$kbv" ] || { echo "no kbv binary at $kbv: build it, or set KBV" >&2; exit 2; }
repeats="${1:-2}"
problem="$here/tests/integration/fixtures/burner/94_MSELoss_1M.py"
cand="$here/tests/integration/fixtures/burner/mse_identical.py"
out="$(mktemp -d /tmp/kbv-contention-XXXXXX)"
spinners=()
stop_spinners() { for p in "${spinners[@]}"; do kill "$p" 2>/dev/null || true; done; spinners=(); }
trap 'stop_spinners; rm -rf "$out"' EXIT
printf '%-8s %-7s %-10s %-34s %s\n' spinners repeat speedup ci wait_share
for n in 0 1 "$(nproc)"; do
  for ((k = 0; k < n; k++)); do (while :; do :; done) & spinners+=($!); done
  for ((i = 1; i <= repeats; i++)); do
    json="$out/$n-$i.json"
    "$kbv" eval "$problem" "$cand" --protocol standard --device cpu --time-budget 3 --json "$json" \
      --build-dir "$out/builds" --quiet > /dev/null || true
    python3 - "$json" "$n" "$i" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
t = v.get("timing") or {}
s = next((s for s in t.get("speedups", []) if s["baseline"] == t.get("primary_baseline")), None)
sp = f"{s['median']:.3f}" if s else "-"
ci = f"[{s['ci_low']:.3f}, {s['ci_high']:.3f}] {s['compare']}" if s else v["outcome"]
w = t.get("cpu_wait_share")
print(f"{sys.argv[2]:<8} {sys.argv[3]:<7} {sp:<10} {ci:<34} {w if w is None else round(w, 3)}")
PY
  done
  stop_spinners
done
