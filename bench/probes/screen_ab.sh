#!/usr/bin/env bash
# The comparisons' fused float32 screen against torch's operators (KBV_SCREEN=operators) on one
# machine: an honest torch ReLU on a ReLU problem whose input and output are each 1/DIVISOR of
# the device, under PROTOCOL, each way ROUNDS times, every judge profiled; prints each way's
# correctness and timing steps (bench/probes/summarize_profile.py).
#   KBV=build-gpu/bin/kbv bench/probes/screen_ab.sh [DIVISOR=12] [PROTOCOL=strict] [ROUNDS=2] [OUTDIR]
set -uo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
divisor="${1:-12}" protocol="${2:-strict}" rounds="${3:-2}" out="${4:-$(mktemp -d /tmp/kbv-screen-ab-XXXXXX)}"
mkdir -p "$out/fused" "$out/operators"
for way in fused operators; do
  for ((k = 1; k <= rounds; ++k)); do
    if [ "$way" = operators ]; then export KBV_SCREEN=operators; else unset KBV_SCREEN; fi
    KBV_JUDGE_PROFILE="$out/$way" "$here/bench/probes/hoard_probe.sh" "$divisor" "$protocol" honest
  done
  unset KBV_SCREEN
  echo "== $way ($rounds evaluations)"
  python3 "$here/bench/probes/summarize_profile.py" "$out/$way" | grep -E "compare|correctness|timing.check|trivial|^strict|^standard|^verified" | head -24
done
