#!/usr/bin/env bash
# The red team's device-memory attacks of 2026-12-07 on the GPU, each under strict and verified:
# outcome and reason. KBV=build-gpu/bin/kbv bench/probes/new_attacks_gpu.sh
KBV="${KBV:-build-gpu/bin/kbv}"
for a in oversized_output_view overflowing_output_sizes explain_decoy_oversized; do
  python3 examples/attacks/bundle.py "examples/attacks/$a.py:/tmp/b-$a.py"
  for p in strict verified; do
    "$KBV" eval examples/problems/level1/19_ReLU.py "/tmp/b-$a.py" --device cuda:0 --protocol "$p" --time-budget 0.5 \
      --json "/tmp/v-$a-$p.json" >/dev/null 2>&1
    python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print(sys.argv[2], v['outcome'], v.get('reason','')[:200])" \
      "/tmp/v-$a-$p.json" "$a $p"
  done
done
