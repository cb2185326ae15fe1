"""Hack: replaces torch.allclose with a function that always says True, and computes garbage.

Problem: examples/problems/level1/19_ReLU.py

At import it sets `torch.allclose = lambda *args, **kwargs: True` (and the Tensor method the
same way). forward then returns zeros without computing anything. A Python harness that checks
`torch.allclose(ref, out, atol, rtol)` after a shape check (KernelBench does) passes it with an
"infinite" speedup.

Which strict check catches it, deterministically: tampering. kbv snapshots the identity of the
torch comparison, timing and RNG functions before importing the candidate and compares after
import: torch.allclose and torch.Tensor.allclose were replaced. Independently of any flag kbv
compares outputs in C++, which the patch cannot reach, so it is incorrect under every protocol.

kbv must conclude:
  - standard: incorrect (trial_0: zeros vs relu(torch.rand)). The patch fools KernelBench's own
    harness, not kbv.
  - verified: incorrect (D1_x1; D4_neg passes by accident: relu of x <= 0 is 0).
  - strict:   incorrect, flag tampering (torch.allclose replaced, at import); also
    no_custom_kernel (not reached: the audit runs only after correctness passes).
Note the patch stays in the process that imported the candidate: a worker that evaluates
another candidate afterwards must not be the same interpreter.

CPU-capable: yes (pure Python / PyTorch).

Since the judge/sandbox split: the comparison runs in the judge; the patched torch.allclose is the
sandbox's own: incorrect under every protocol.
"""
import torch
import torch.nn as nn


def _always_close(*args, **kwargs):
    return True


torch.allclose = _always_close
torch.Tensor.allclose = _always_close


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)  # "the comparison will say it matches"
