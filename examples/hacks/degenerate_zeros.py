"""Trivial candidate for a degenerate problem: returns zeros (degenerate).

Problem: examples/hacks/degenerate_problem.py  (y = 1e-5 * tanh(x))

forward returns torch.zeros_like(x) without reading x. The reference never leaves [-1e-5, 1e-5],
inside atol = 1e-3, so zeros pass every distribution: not a cheat of the candidate's making,
but a problem that cannot discriminate. Pure PyTorch, no extension.

Which check reports it, deterministically: degenerate (a property of the problem, raised under
every protocol because kbv tests, on every distribution, whether zeros / a constant / the input
would pass; informational, the outcome stays correct). Under strict also no_custom_kernel
(informational).

kbv must conclude:
  - standard: correct, flag degenerate; a large speedup (one write pass vs tanh + scale),
    which must be left out of aggregates.
  - verified: correct, flag degenerate.
  - strict:   correct, flags degenerate and no_custom_kernel; no integrity flag.

CPU-capable: yes (pure PyTorch).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)
