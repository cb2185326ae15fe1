#!/usr/bin/env bash
# kbv's main job on the built-in default: set up and build, then evaluate the demo corpus
# (runs/: three "models" of LLM-style candidates) against the built-in suite (problems/) under
# the three protocols, and write the leaderboard. Without a GPU it runs the CPU path: candidates
# with CUDA sources are recorded as skipped, the others run at the problems' small size with
# CPU timing — and it says so.
#   scripts/demo.sh            # results in out/demo/: kbv.db, report.md, report.html, eval_results
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="${KBV_VENV:-$HOME/.cache/kbv-venv}/bin:$PATH"
KBV="${KBV_BUILD_DIR:-build}/bin/kbv"
OUT="${KBV_DEMO_OUT:-out/demo}"
mkdir -p "$OUT"

if [ -e /dev/nvidia0 ] || [ -e /dev/nvidiactl ]; then
  echo "demo: GPU found: evaluating the whole demo corpus at full size"
else
  echo "demo: no GPU on this machine: running the CPU path. CUDA candidates are recorded as"
  echo "      skipped; the PyTorch-only ones run at the problems' small size with CPU timing."
fi

"$KBV" run --problems problems --runs runs --protocol standard,verified,strict --db "$OUT/kbv.db" "$@"
"$KBV" report --db "$OUT/kbv.db" --md "$OUT/report.md" --html "$OUT/report.html" --csv "$OUT/verdicts.csv"
# KernelBench's eval_results.json holds one level: the demo runs hold three, one folder each.
for level in 1 2 3; do
  "$KBV" export --db "$OUT/kbv.db" --out "$OUT/eval_results/level$level" --level "$level"
done
cat "$OUT/report.md"
echo
echo "demo: leaderboard in $OUT/report.md and $OUT/report.html; KernelBench-style eval_results.json in $OUT/eval_results/level<L>/<run>/"
