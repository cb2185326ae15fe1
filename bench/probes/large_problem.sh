#!/usr/bin/env bash
# The judge's device memory at a problem size that is a large part of the device (the OOM of
# session 27): `kbv eval` of an honest torch ReLU on a problem whose input and output are each
# 1/DIVISOR of the device's memory, under each protocol, printing outcome and reason.
#   KBV=build-gpu/bin/kbv bench/probes/large_problem.sh [DIVISOR=12] [PROTOCOLS="standard strict"]
set -uo pipefail
KBV="${KBV:-build-gpu/bin/kbv}"
divisor="${1:-12}"
dir="$(mktemp -d /tmp/kbv-large-XXXXXX)"
cat >"$dir/large_relu.py" <<PY
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


n = torch.cuda.get_device_properties(0).total_memory // $divisor // 4


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []
PY
cat >"$dir/relu_torch.py" <<'PY'
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
PY
for protocol in ${2:-standard strict}; do
  "$KBV" eval "$dir/large_relu.py" "$dir/relu_torch.py" --device cuda:0 --protocol "$protocol" --time-budget 1 \
    --json "$dir/$protocol.json" >/dev/null 2>&1
  python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print(sys.argv[2], 1/$divisor, v['outcome'], v.get('stage'), v.get('reason','')[:1500])" \
    "$dir/$protocol.json" "$protocol"
done
rm -rf "$dir"
