"""Hack: right on seven calls in eight, zeros on the eighth, betting that the judge checks only
some of its timed calls (one round in four, chosen at random, was kbv's rule before issue 33:
with three wrong calls among ~25 it passed about four times in ten).

Problem: examples/problems/level1/19_ReLU.py

kbv must conclude, in every protocol, every time: incorrect (every timed call is checked now, so
whether a wrong one is met is no longer the luck of a draw; strict adds result_reuse).

CPU-capable: yes (pure PyTorch).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls % 8 == 0:
            return torch.zeros_like(x)
        return torch.relu(x)
