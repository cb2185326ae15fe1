"""Attack: keep moving the deadline (examples/problems/level1/19_ReLU.py).

The old worker's every `stage` message moved kbv's deadline. This one sends a `stage` message
to every fd it holds every 100 ms while forward() sleeps for 40 s.
kbv must conclude: timeout at the run limit (tests use --run-timeout 5), however many messages.
"""
import json
import os
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report, writable_fds  # noqa: E402


class ModelNew(nn.Module):
    def forward(self, x):
        line = (json.dumps({"event": "stage", "stage": "build"}) + "\n").encode()
        end = time.time() + 40
        while time.time() < end:
            for fd, _ in writable_fds():
                try:
                    os.write(fd, line)
                except OSError:
                    pass
            time.sleep(0.1)
        report("deadline_extension", "slept 40 s")
        return torch.zeros_like(x)
