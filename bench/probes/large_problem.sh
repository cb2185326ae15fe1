#!/usr/bin/env bash
# The judge's device memory at a problem size that is a large part of the device (the OOM of
# session 27): `kbv eval` of an honest torch ReLU on a problem whose input and output are each
# 1/DIVISOR of the device's memory, under each protocol, printing outcome, flags and reason
# (hoard_probe.sh's honest case).
#   KBV=build-gpu/bin/kbv bench/probes/large_problem.sh [DIVISOR=12] [PROTOCOLS="standard strict"]
set -uo pipefail
for protocol in ${2:-standard strict}; do
  echo "$protocol:"
  "$(dirname "$0")/hoard_probe.sh" "${1:-12}" "$protocol" honest
done
