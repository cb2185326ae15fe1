"""Hack: its first ModelNew is honest; every later one is honest only for its first calls.

Problem: examples/problems/level1/7_Swish.py

kbv run serves all protocols of a candidate with one sandbox, strict first, then verified, then
standard, each with a fresh ModelNew; since session 15 verified takes strict's timing rounds
instead of timing again. A candidate that has read that counts its ModelNew constructions: the
first (strict) computes Swish honestly, so strict's correctness and timed checks all pass and
its rounds are honest. A later ModelNew computes honestly for HONEST_CALLS calls, enough for
verified's correctness (D1-D4) and standard's (5 trials), and returns zeros after that,
hoping that no one looks at the later calls of the protocol that did not time it.

kbv must conclude (kbv run --protocol strict,verified,standard, or any run serving all three):
  - strict:   correct (it is honest there).
  - verified: incorrect: taking strict's rounds, verified's own ModelNew still meets 8 calls on
    fresh inputs of its kinds, every output checked.
  - standard: incorrect: its own timed rounds check one call in four.

Under kbv eval (one protocol per sandbox) each protocol's first ModelNew is honest: correct.

CPU-capable: yes (pure PyTorch).
"""
import torch
import torch.nn as nn

HONEST_CALLS = 6
_constructed = [0]


class ModelNew(nn.Module):
    def __init__(self, beta):
        super().__init__()
        _constructed[0] += 1
        self.first = _constructed[0] == 1
        self.beta = beta
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.first or self.calls <= HONEST_CALLS:
            return x * torch.sigmoid(self.beta * x)
        return torch.zeros_like(x)
