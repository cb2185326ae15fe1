#!/usr/bin/env bash
# kbv's main job on the built-in default: set up, build, then evaluate the example candidates
# against their problems and print every verdict. On a machine without a GPU it runs the CPU
# path (CPU-capable candidates, small sizes, CPU timing) and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="${KBV_VENV:-$HOME/.cache/kbv-venv}/bin:$PATH"
KBV="${KBV_BUILD_DIR:-build}/bin/kbv"
OUT="${KBV_DEMO_OUT:-out/demo}"
mkdir -p "$OUT"
P=examples/problems/level1
C=examples/candidates

if [ -e /dev/nvidia0 ] || [ -e /dev/nvidiactl ]; then
  device=cuda:0
  pairs=("19_ReLU relu_cuda" "7_Swish swish_cuda" "40_Linear_ReLU linear_relu_cuda" "19_ReLU relu_raw_scratch"
         "19_ReLU relu_wrong" "19_ReLU relu_shape_shortcut" "19_ReLU relu_crash_segfault" "19_ReLU relu_illegal_address"
         "19_ReLU relu_cpp_ext" "7_Swish swish_cpp_ext")
  echo "demo: GPU found; evaluating every example at full size"
else
  device=cpu
  pairs=("19_ReLU relu_cpp_ext" "7_Swish swish_cpp_ext" "19_ReLU relu_wrong_cpu" "19_ReLU relu_shape_shortcut"
         "19_ReLU relu_raises" "19_ReLU relu_crash_segfault" "19_ReLU relu_exit" "19_ReLU relu_cuda")
  echo "demo: no GPU on this machine: running the CPU path (CPU-capable candidates at the problems'"
  echo "      small size, CPU timing, no device memory; CUDA candidates are reported as skipped)"
fi

for protocol in standard verified; do
  for pair in "${pairs[@]}"; do
    set -- $pair
    echo
    echo "### kbv eval $P/$1.py $C/$2.py --protocol $protocol"
    "$KBV" eval "$P/$1.py" "$C/$2.py" --device "$device" --protocol "$protocol" --time-budget 2 \
      --json "$OUT/${2}_${protocol}.json" --run-timeout 120
  done
  # Only the shape shortcut's verdict changes between protocols; run the rest once.
  pairs=("19_ReLU relu_shape_shortcut")
done
echo
echo "demo: verdicts written to $OUT/"
