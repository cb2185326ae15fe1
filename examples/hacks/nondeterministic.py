"""Hack: output jitters from call to call by almost the tolerance (nondeterministic).

Problem: examples/problems/level1/19_ReLU.py

Models a racy kernel (unordered atomics, a read-before-write race) whose every single result
is "close enough" but never the same twice: each element of relu(x) gets +-0.9 * tol *
(1 + |relu(x)|), the sign drawn from a private generator seeded from os.urandom (unseeded, and
not torch's default generator, so kbv's seeding cannot tame it). tol is the fp32 tolerance,
1e-3 (1e-2 for fp16/bf16, with a 0.75 factor for their coarser rounding). Every call on its own
is within atol + rtol * |ref| of the reference, so any check of one call passes. Two calls on the
same input differ by 1.8 * tol * (1 + |ref|) wherever the two signs differ, about half the
elements: beyond tolerance. Pure PyTorch, no extension.

Which strict check catches it, deterministically: nondeterministic. Strict calls the candidate a
second time on a fresh copy of the first passing distribution's inputs (D1_x1) and compares the
two outputs at the same tolerance: with 16384 elements (KBV_SMALL) the chance that no sign
differs is 2^-16384.

kbv must conclude:
  - standard: correct (each of the 5 trials within tolerance); speedup below 1x (extra passes).
  - verified: correct.
  - strict:   incorrect, flag nondeterministic (D1_x1 repeat); also no_custom_kernel
    (informational).

CPU-capable: yes (pure PyTorch).
"""
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._generators = {}  # device -> private, unseeded generator

    def _generator(self, device: torch.device) -> torch.Generator:
        key = str(device)
        if key not in self._generators:
            g = torch.Generator(device=device)
            g.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
            self._generators[key] = g
        return self._generators[key]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(x)
        if x.dtype in (torch.float16, torch.bfloat16):
            amplitude = 0.75e-2
        else:
            amplitude = 0.9e-3
        bits = torch.randint(0, 2, y.shape, generator=self._generator(y.device), device=y.device)
        sign = bits.to(torch.float32) * 2 - 1
        noise = amplitude * (1 + y.float().abs()) * sign
        return (y.float() + noise).to(y.dtype)
