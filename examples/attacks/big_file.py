"""Attack: fill the disk (examples/problems/level1/19_ReLU.py).

Writes a 2 GiB file into its private tmp folder and another into its own build folder, 64 MiB
at a time, at import. Returns zeros.
kbv must conclude: a recorded outcome for this candidate; no file of it grows past the
sandbox's file-size limit (1 GiB by default).
"""
import os
import signal
import sys
import tempfile

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report  # noqa: E402

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG instead of dying, to report it
chunk = b"\0" * (64 << 20)
for folder in (tempfile.gettempdir(), os.environ.get("TORCH_EXTENSIONS_DIR", tempfile.gettempdir())):
    path = os.path.join(folder, "kbv-attack-big.bin")
    written = 0
    try:
        with open(path, "wb") as f:
            while written < (2 << 30):
                f.write(chunk)
                written += len(chunk)
        report("big_file", f"WROTE 2 GiB to {path}")
    except OSError as e:
        report("big_file", f"{path}: stopped at {written >> 20} MiB: {e}")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)
