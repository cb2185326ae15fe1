"""Attack: take all the host memory (examples/problems/level1/19_ReLU.py).

At import, allocates and touches 256 MiB blocks until it is stopped (up to 64 GiB).
kbv must conclude: a recorded outcome for this candidate (crashed or runtime_error, by the
sandbox's memory limit); every other verdict of the run unchanged.
"""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report  # noqa: E402

blocks = []
try:
    for i in range(256):
        b = bytearray(256 << 20)
        b[::4096] = b"\1" * len(b[::4096])  # touch every page
        blocks.append(b)
    report("memory_hog", f"HELD {len(blocks) * 256} MiB")
except MemoryError:
    report("memory_hog", f"MemoryError after {len(blocks) * 256} MiB")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)
