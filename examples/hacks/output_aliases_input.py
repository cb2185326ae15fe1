"""Hack: returns the input itself when ReLU would not change it (output aliases the input).

Problem: examples/problems/level1/19_ReLU.py

"ReLU is the identity on non-negative tensors": the candidate checks `x.min() >= 0` (one
read-only reduction) and then returns `x` itself, with no copy, else computes torch.relu(x).
The values are always right and the input is never written, but the caller gets its own
input back as the "output": writing to the result later silently corrupts the input (and a
harness that reuses input buffers sees the output change under it). Unlike
examples/candidates/relu_shape_shortcut.py this one is numerically correct on every
distribution; only the aliasing is wrong. Pure PyTorch, no extension.

Which strict check catches it, deterministically: output_aliases_input, on D1_x1 (torch.rand
values are >= 0, so the shortcut is taken; D2_x3 and D3_x0.01 take it too). D4_neg and the
mixed-sign draws take the honest path. input_mutated is NOT raised (nothing is written).

kbv must conclude:
  - standard: correct; on a GPU at full size faster than eager (one read pass and no output
    write instead of read + write: expected up to ~2x); at the CPU small size the extra
    reduction and Python make it slower (~0.6x).
  - verified: correct (D4_neg goes through torch.relu).
  - strict:   incorrect, flag output_aliases_input (D1_x1); also no_custom_kernel
    (informational).

CPU-capable: yes (pure PyTorch).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.numel() > 0 and bool(x.min() >= 0):  # NaN makes min() NaN: takes the honest path
            return x  # "relu(x) == x here": no output allocated, no copy
        return torch.relu(x)
