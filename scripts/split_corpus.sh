#!/usr/bin/env bash
# Lays out the judge/sandbox split's examples-and-hacks corpus under DIR (suite/level1, runs/examples,
# runs/hacks, samples.txt naming each sample's source file) for `kbv run`: the CUDA examples, the
# stream and device-state hacks, and demo-gamer's never-joined side stream. Used by
# scripts/gpu_check.sh (step split) and bench/probes/judge_stall.sh. Usage: split_corpus.sh DIR
set -euo pipefail
S="${1:?usage: split_corpus.sh DIR}"
mkdir -p "$S" && S="$(cd "$S" && pwd)"  # absolute: the copies below run from the repository root
cd "$(dirname "$0")/.."
mkdir -p "$S/suite/level1" "$S/runs/examples" "$S/runs/hacks"
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
