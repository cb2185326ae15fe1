"""Hack: ReLU computed in place on the input, returned as the output (input_mutated + aliasing).

Problem: examples/problems/level1/19_ReLU.py

`x.relu_()` overwrites the caller's tensor with relu(x) and returns that same tensor. The
values it returns are right, so a harness that only compares values passes it; it saves the
output allocation, and a caller that still needs `x` afterwards gets relu(x) instead. Pure
PyTorch, no extension.

Which strict check catches it, deterministically:
  - output_aliases_input: on the very first distribution (D1_x1) the output *is* the input
    tensor (same storage);
  - input_mutated: on the first distribution with negative values (D4_neg, all values <= 0,
    and the mixed-sign normal / heavy_tail / zeros_ties draws) the input's negative entries are
    zeroed. On D1-D3 (values >= 0) relu_ leaves every value unchanged, so the mutation check
    alone would not see anything there: that is why the aliasing check matters.

kbv must conclude:
  - standard: correct (values match; kbv gives the candidate its own copy of the inputs, so
    the reference is unaffected). Speedup about 1x: same memory traffic as eager relu.
  - verified: correct (D4 too: the returned values are relu(x)).
  - strict:   incorrect, flags output_aliases_input (D1_x1) and input_mutated (D4_neg).
    Also no_custom_kernel (informational).

CPU-capable: yes (pure PyTorch; both flags are raised on the CPU as well).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.relu_()  # in place: no output allocation, and returns x itself
