#!/usr/bin/env bash
# The judge/sandbox split's key GPU figures in one short call (after gpu_check.sh's build):
# honest examples under verified (speedups against the one-process figures of bench/RESULTS.md),
# then the side-stream hacks and an honest stream control under standard and strict. Each
# kbv run has a time limit so the summary always prints.
cd "$(dirname "$0")/.."
BUILD=build-gpu; OUT="${OUT:-/tmp/kbv-gpu-out}"; S="$OUT/focus"; mkdir -p "$S/suite/level1" "$S/ex/examples" "$S/hk/hacks"
cp examples/problems/level1/{7_Swish,19_ReLU,40_Linear_ReLU}.py problems/level1/8_GELU.py "$S/suite/level1/"
put() { cp "$1" "$S/$2/level_1_problem_$3_sample_$4_kernel.py"; echo "${2#*/} $3 $4 $(basename "$1")" >> "$S/samples.txt"; }
put examples/candidates/swish_cuda.py ex/examples 7 0
put examples/candidates/relu_cuda.py ex/examples 19 0
put examples/candidates/linear_relu_cuda.py ex/examples 40 0
put examples/hacks/side_stream_full_grid.py hk/hacks 19 0
put examples/hacks/side_stream.py hk/hacks 19 1
put examples/hacks/honest_own_stream.py hk/hacks 19 2
put runs/demo-gamer/level_1_problem_8_sample_0_kernel.py hk/hacks 8 0
run() {  # folder protocols seconds
  start=$(date +%s)
  timeout "$3" "$BUILD/bin/kbv" run --problems "$S/suite" --runs "$S/$1" --db "$S/$1.db" --protocol "$2" --time-budget 1 \
    --run-timeout 120 --jobs 16 --build-dir /tmp/kbv-builds >"$S/$1.log" 2>&1
  echo "kbv run $1 ($2): exit $? after $(( $(date +%s) - start )) s"; grep -E "build phase|evaluation phase" "$S/$1.log"
}
run ex verified "${KBV_FOCUS_EX_SECONDS:-130}"
run hk standard,strict "${KBV_FOCUS_HK_SECONDS:-190}"
python3 scripts/summarize_split.py "$S/ex.db" "$S/hk.db" "$S/samples.txt" | tee "$OUT/focus_summary.md"
