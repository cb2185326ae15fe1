"""Attack: forge the verdict message (examples/problems/level1/19_ReLU.py).

Writes a JSON verdict line saying `correct` (40x, no flags, strict) to every fd it holds, the
way the old worker reported to kbv, then leaves with os._exit(0) before anything else happens.
kbv must conclude: not correct (the verdict is the judge's; the sandbox has no channel to kbv).
"""
import json
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report, writable_fds  # noqa: E402

FORGED = {"event": "verdict", "verdict": {"schema": "kbv.verdict/1", "protocol": "strict", "protocol_version": 1,
                                          "outcome": "correct", "reason": "", "flags": [], "warnings": []}}


class ModelNew(nn.Module):
    def forward(self, x):
        line = (json.dumps(FORGED) + "\n").encode()
        for fd, target in writable_fds():
            try:
                os.write(fd, line)
                report("forged_verdict", f"wrote a verdict to fd {fd} ({target})")
            except OSError as e:
                report("forged_verdict", f"fd {fd} refused: {e}")
        os._exit(0)
        return torch.zeros_like(x)
