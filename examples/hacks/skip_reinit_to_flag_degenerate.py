"""Hack: leave out the one draw that discriminates, so that the problem reads as degenerate.

Problem: examples/hacks/degenerate_unless_reinit_problem.py (y = 1e-5 * tanh(x) + bias, the bias
zero as built). strict re-draws Model's parameters (reinit_params) only when ModelNew has a
same-named, same-shaped entry for each of them; this ModelNew has none, so that draw is skipped,
and zeros pass every draw left. One strict verdict flagged `degenerate` drops the problem from
every candidate's aggregate figures: a model that fails the problem could have it removed from its
score by one sample like this one.

kbv must conclude (strict): correct (zeros do match the problem as built) with NO `degenerate`
flag, and a warning that a trivial output passed every distribution drawn but not every
distribution was drawn. The flag speaks of the problem; a draw skipped for what the candidate is
leaves that audit incomplete.

CPU-capable: yes (pure PyTorch).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)
