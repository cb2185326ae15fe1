"""Attack: write where a candidate has no business (examples/problems/level1/19_ReLU.py).

Tries to create a file in the installed torch package (site-packages), in the problem's folder
(next to the problem files kbv reads) and in the folder of this candidate, and to append to
torch/__init__.py. Computes a correct ReLU.
kbv must conclude: none of those files exists afterwards, torch is unchanged.
"""
import glob
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report  # noqa: E402

MARK = "kbv_attack_marker.py"
here = os.path.dirname(os.path.abspath(__file__))
targets = [os.path.join(os.path.dirname(torch.__file__), MARK), os.path.join(here, MARK)]
targets += [os.path.join(os.path.dirname(p), MARK) for p in glob.glob("/work/**/19_ReLU.py", recursive=True)[:3]]
for t in targets:
    try:
        with open(t, "w") as f:
            f.write("# written by an attack\n")
        report("write_outside", f"WROTE {t}")
    except OSError as e:
        report("write_outside", f"{t}: {e}")
try:
    with open(torch.__file__, "a") as f:
        f.write("\n# kbv attack\n")
    report("write_outside", f"APPENDED {torch.__file__}")
except OSError as e:
    report("write_outside", f"{torch.__file__}: {e}")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
