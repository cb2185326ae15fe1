"""Hack: uses the input tensor as scratch space (input_mutated, without aliasing).

Problem: examples/problems/level1/19_ReLU.py

relu(x) = -min(-x, 0). The candidate negates x *in place* (`torch.neg(x, out=x)`), clamps it
in place to <= 0, and writes the final negation into a fresh output tensor: one temporary
saved, a correct, separate output returned, and the caller's input left holding -relu(x).
Pure PyTorch, no extension.

Which strict check catches it, deterministically: input_mutated, on the first distribution
(D1_x1): every positive input element comes back negated (torch.rand draws are > 0 except
for measure-zero exact zeros). The output does not share storage with the input, so
output_aliases_input is NOT raised.

kbv must conclude:
  - standard: correct (kbv runs the candidate on its own copy of the inputs, so the reference
    never sees the clobbered tensor). Speedup below 1x (three passes instead of one): the
    point of the example is the mutation, not speed.
  - verified: correct on all four distributions.
  - strict:   incorrect, flag input_mutated (D1_x1); also no_custom_kernel (informational).
    It must NOT be flagged result_reuse: it caches nothing. (kbv's timing re-check, as of
    e4ccce1, calls the candidate and then the reference on the same rewritten tensors, so the
    reference sees the clobbered input and the mismatch is blamed on result_reuse: a false
    attribution the re-check should avoid by running the reference on a pristine copy.)

CPU-capable: yes (pure PyTorch).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        torch.neg(x, out=x)       # scratch: x now holds -x
        x.clamp_(max=0.0)         # x holds min(-x, 0) = -relu(x_original)
        return torch.neg(x)       # fresh tensor: relu(x_original)
