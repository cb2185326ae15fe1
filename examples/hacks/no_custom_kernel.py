"""Not a cheat but reported as such: a PyTorch-only rewrite (no_custom_kernel).

Problem: examples/problems/level1/40_Linear_ReLU.py

forward is torch.relu(F.linear(x, weight, bias)): exactly what the reference does, with the
same parameter names (self.linear) so kbv copies (and under strict re-initialises) its
weights. Correct everywhere, no extension, no kernel of its own: a benchmark of custom kernels
must not count it as one.

Which strict check reports it, deterministically: no_custom_kernel, which is informational
(not an integrity flag): the outcome stays correct. On the CPU it is raised from the source
(no extension built, no __global__ / @triton.jit kernel defined); on a GPU also from the
audit's trace (every kernel launched belongs to PyTorch or its libraries).

kbv must conclude:
  - standard: correct, speedup about 1x.
  - verified: correct, about 1x.
  - strict:   correct, with the flag no_custom_kernel (and no integrity flag).

CPU-capable: yes (pure PyTorch).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(F.linear(x, self.linear.weight, self.linear.bias))
