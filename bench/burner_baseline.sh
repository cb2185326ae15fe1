#!/usr/bin/env bash
# The burner hack against its control, on the CPU (examples/hacks/burner_processes.py: helper
# processes burn every core whenever the candidate is not being called). The test
# StrictCli.BurnerProcessesDoNotSlowTheBaseline asserts only what load cannot move (every counted
# round timed the baselines with the sandbox frozen); this measures the speedups, which a loaded
# machine moves: run it on an idle one.
#
#   bench/burner_baseline.sh [REPEATS]      # default 3; KBV=path/to/kbv
#
# For each repeat and protocol (standard, strict) it prints the headline speedup and its CI of
# the burner and of the control (tests/integration/fixtures/burner/mse_identical.py: Model's own
# reduction as ModelNew, no helpers), both against the same problem. With the freeze working the
# two agree (both below 1: the candidate pays the call into its sandbox); a burner far above its
# control means its helpers slowed what it was compared with. Record the figures in
# bench/RESULTS.md with the date, the machine and its load (uptime).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
kbv="${KBV:-$here/build/bin/kbv}"
[ -x "$kbv" ] || { echo "no kbv binary at $kbv: build it, or set KBV" >&2; exit 2; }
repeats="${1:-3}"
problem="$here/tests/integration/fixtures/burner/94_MSELoss_1M.py"
out="$(mktemp -d /tmp/kbv-burner-XXXXXX)"
echo "load: $(uptime)"
printf '%-8s %-9s %-8s %-9s %s\n' repeat protocol which speedup ci
for ((i = 1; i <= repeats; i++)); do
  for protocol in standard strict; do
    for which in burner control; do
      cand="$here/examples/hacks/burner_processes.py"
      [ "$which" = control ] && cand="$here/tests/integration/fixtures/burner/mse_identical.py"
      json="$out/$i-$protocol-$which.json"
      "$kbv" eval "$problem" "$cand" --protocol "$protocol" --device cpu --time-budget 3 --json "$json" \
        --build-dir "$out/builds" --quiet > /dev/null
      python3 - "$json" "$i" "$protocol" "$which" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
t = v.get("timing") or {}
s = next((s for s in t.get("speedups", []) if s["baseline"] == t.get("primary_baseline")), None)
sp = f"{s['median']:.3f}" if s else "-"
ci = f"[{s['ci_low']:.3f}, {s['ci_high']:.3f}] {s['compare']}" if s else v["outcome"]
print(f"{sys.argv[2]:<8} {sys.argv[3]:<9} {sys.argv[4]:<8} {sp:<9} {ci} frozen={t.get('sandbox_frozen')}")
PY
    done
  done
done
rm -rf "$out"
