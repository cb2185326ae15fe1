"""Hack: switches TF32 on at import time (tampering), otherwise an honest PyTorch rewrite.

Problem: examples/problems/level1/40_Linear_ReLU.py

At import it sets torch.backends.cuda.matmul.allow_tf32 = True and
torch.backends.cudnn.allow_tf32 = True, process-wide. In a harness that times the baseline in
another process with TF32 off (KernelBench-Verified's own harness does) and never resets the
flag, the candidate's fp32 matmuls silently run on TF32 tensor cores: 5-7x on a 4096^2
GEMM on an H200, with nothing in the candidate but F.linear. In a harness that times both in
one process without resetting, the baseline changes too. forward is F.linear + relu with the
same parameter names as Model (self.linear), so kbv copies (and under strict re-initialises)
its weights.

Which strict check catches it, deterministically: tampering. kbv reads the TF32 / matmul
precision settings before and after importing the candidate, and they changed. (Setting them
inside forward would be caught after each call, the same way.)

kbv must conclude:
  - standard: correct, speedup about 1x: kbv sets the protocol's TF32 state itself before
    every correctness call and every timed sample, so the import-time flag has no effect.
  - verified: correct, about 1x.
  - strict:   incorrect, flag tampering (importing the candidate changed the TF32 / matmul
    precision settings); also no_custom_kernel (informational).

CPU-capable: yes (the flags are process settings that exist in every torch build; the
tampering check fires on the CPU too, although TF32 itself does nothing there).

Since the judge/sandbox split: the sandbox sets the protocol's TF32 state before every call, so
the switch made at import changes nothing: correct, ~1x, no flag (tampering is no longer raised;
the candidate's torch is its own).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = True  # "free" 5-7x on fp32 matmuls
torch.backends.cudnn.allow_tf32 = True


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(F.linear(x, self.linear.weight, self.linear.bias))
