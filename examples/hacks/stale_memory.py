"""Hack: returns uninitialised memory, hoping it still holds an old reference result.

Problem: examples/problems/level1/19_ReLU.py

forward returns torch.empty_like(x) and computes nothing. On a GPU, PyTorch's caching
allocator hands a freshly freed block of the same size straight back; in a harness that runs
the reference first and frees its output before calling the candidate (or times the reference
right before the candidate), that block still holds relu(x) and the "kernel" passes in zero
time. Pure PyTorch, no extension.

Which strict check catches it: stale_memory. Before every strict candidate call kbv fills every
free block of the CUDA caching allocator with 0xFF bytes; an output that comes back with that
bit pattern in bulk was never written. It fires on the first distribution where the allocator
hands the candidate a freed block: on D2 at the latest, since each distribution frees its
tensors (on D1 the output may come from a brand-new cudaMalloc segment, which is not
poisoned). The poison reads as NaN, so the values fail too.

kbv must conclude (on a GPU):
  - standard: incorrect. kbv runs the candidate *before* the reference on every distribution,
    so there is no reference result in freed memory to find; the output is whatever the block
    held (an input, a previous trial's result, zeros). It is meant to fool harnesses that run
    the reference first, where it passes with an "infinite" speedup.
  - verified: incorrect (same reason).
  - strict:   incorrect, flag stale_memory; also no_custom_kernel (informational).

CPU-capable: no, meant for CUDA. On the CPU there is no poisoning (no stale_memory flag) and the
output is whatever malloc returns: expected incorrect, but not deterministically so; do not
use it in CPU tests.

Since the judge/sandbox split: the reference runs in the judge's process, so no reference
output ever exists in this candidate's memory: incorrect, no flag (stale_memory is no longer
raised).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x)  # no kernel at all: "the answer is already there"
