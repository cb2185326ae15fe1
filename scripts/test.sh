#!/usr/bin/env bash
# Sets up (scripts/setup.sh), then runs every CPU test tier: unit, worker, integration.
# GPU tests (label gpu) run on the GPU machine through scripts/gpu_check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
KBV_BUILD_DIR="${KBV_BUILD_DIR:-build}"
export PATH="${KBV_VENV:-$HOME/.cache/kbv-venv}/bin:$PATH"
# kbv evals of one device take turns (docs/timing.md "Turns on a device"); the tests, run two at a
# time, would wait on each other's evaluations and move the wall-clock bounds some of them check.
# The turns have tests of their own (DeviceLock.*, LockedTurn.*, EvalCli.ATimedEvalWaits...).
export KBV_DEVICE_LOCK="${KBV_DEVICE_LOCK:-0}"
cd "$KBV_BUILD_DIR"
ctest -L 'unit|worker|integration' --output-on-failure -j2 "$@"
