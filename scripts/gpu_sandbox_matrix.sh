#!/usr/bin/env bash
# Which sandbox mechanism a GPU machine's CUDA tolerates: one quick kbv eval (a PyTorch ReLU on
# cuda:0) per switch turned off (KBV_SANDBOX_*=0), printing outcome and reason. Assumes
# scripts/gpu_check.sh built build-gpu. Prints one line per setting.
cd "$(dirname "$0")/.."
mkdir -p /tmp/kbv-matrix && cat > /tmp/kbv-matrix/relu_torch.py <<'PY'
import torch
import torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
PY
chmod -R a+rX /tmp/kbv-matrix
for setting in "" KBV_SANDBOX_READONLY=0 KBV_SANDBOX_CAPS=0 KBV_SANDBOX_LANDLOCK=0 KBV_SANDBOX_CGROUP=0 \
               "KBV_SANDBOX_READONLY=0 KBV_SANDBOX_CAPS=0" KBV_SANDBOX_NAMESPACES=0; do
  env $setting build-gpu/bin/kbv eval examples/problems/level1/19_ReLU.py /tmp/kbv-matrix/relu_torch.py --device cuda:0 \
    --protocol strict --time-budget 0.3 --json /tmp/kbv-matrix/v.json --quiet --build-dir /tmp/kbv-matrix/builds >/dev/null 2>&1
  python3 -c "import json,sys; v=json.load(open('/tmp/kbv-matrix/v.json')); i=v.get('isolation') or {}; \
print(sys.argv[1] or 'all on', '|', v['outcome'], '|', v['reason'][:160], '| uid', i.get('outer_uid'), 'ro', i.get('readonly_root'), 'caps_dropped', i.get('capabilities_dropped'), i.get('warnings')); \
v['outcome'] != 'correct' and print('   ', v['output_tail'][-600:].replace(chr(10), ' / '))" "$setting"
done
