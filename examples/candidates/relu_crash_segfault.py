"""Crashing candidate for level1/19_ReLU.py: segfaults the process inside forward.

ctypes.string_at(0) reads from address 0, so the interpreter dies with SIGSEGV (signal 11)
the first time forward runs. Pure Python: crashes the same way on CPU and on GPU.
Importing the module and constructing ModelNew are harmless.

kbv must conclude: crashed (killed by signal SIGSEGV) under every protocol; the worker process
that ran it dies, kbv itself and the other candidates must not.
"""
import ctypes

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ctypes.string_at(0)  # dereferences NULL: SIGSEGV
        return torch.relu(x)
