"""Attack: leave processes behind (examples/problems/level1/19_ReLU.py).

At import: 50 children that sleep for 10 minutes, and a `setsid` grandchild that leaves the
process group (the old worker's group kill missed those). Every one carries the marker
`kbv-attack-child` in its command line. Returns zeros.
kbv must conclude: incorrect, and no process with the marker exists once the evaluation is over.
"""
import os
import subprocess
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report  # noqa: E402

SLEEPER = [sys.executable or "python3", "-c", "import time; time.sleep(600)", "kbv-attack-child"]
children = []
for _ in range(50):
    try:
        children.append(subprocess.Popen(SLEEPER, start_new_session=False))
    except OSError as e:
        report("fork_children", f"fork refused: {e}")
        break
try:
    subprocess.Popen(SLEEPER, start_new_session=True)  # setsid: its own session and group
except OSError as e:
    report("fork_children", f"setsid child refused: {e}")
report("fork_children", f"started {len(children)} children and a setsid one")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)
