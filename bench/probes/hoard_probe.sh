#!/usr/bin/env bash
# The hoard attacks of examples/attacks (hoard_under_share.py in each MODE, hoard_in_zombie.py) and
# an honest torch ReLU on a ReLU problem whose input and output are each 1/DIVISOR of the device,
# under one protocol: outcome, flags and reason of each (tests/gpu/test_judge_evidence_gpu.cpp asserts them).
#   KBV=build-gpu/bin/kbv bench/probes/hoard_probe.sh [DIVISOR=7] [PROTOCOL=standard] [CASES="live zombie cache output honest"]
set -uo pipefail
KBV="${KBV:-build-gpu/bin/kbv}"
divisor="${1:-7}"
protocol="${2:-standard}"
here="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$(mktemp -d /tmp/kbv-hoard-XXXXXX)"
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
printf 'import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n' >"$dir/honest.py"
for case in ${3:-live zombie cache output honest}; do
  case "$case" in
    zombie) candidate="$here/examples/attacks/hoard_in_zombie.py" ;;
    honest) candidate="$dir/honest.py" ;;
    *) candidate="$dir/hoard_$case.py"
       sed "s/^MODE = \"live\"/MODE = \"$case\"/" "$here/examples/attacks/hoard_under_share.py" >"$candidate" ;;
  esac
  start=$(date +%s)
  "$KBV" eval "$dir/large_relu.py" "$candidate" --device cuda:0 --protocol "$protocol" --time-budget 1 --run-timeout 300 \
    --json "$dir/$case.json" >/dev/null 2>&1
  python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print(sys.argv[2], v['outcome'], 'stage', v.get('stage'), [f['name'] for f in v.get('flags',[])], v.get('reason','')[:900])" \
    "$dir/$case.json" "$case ($(( $(date +%s) - start )) s):"
done
rm -rf "$dir"
