"""Hack: a high-priority private stream made in __init__, used inside a torch.autograd.Function,
never joined (the shape of a real RL-optimised level-1 kernel that read 269x under standard).

Problem: examples/problems/level1/19_ReLU.py

`torch.cuda.Stream(priority=-1)` is created once; `apply` runs the op inside
`with torch.cuda.stream(s)` and returns the output allocated there. Nothing waits for the
caller's stream, nothing joins back.

kbv must conclude, in every protocol, on a GPU: incorrect, flag unsynchronized_work (the work
reads the NaN the judge leaves in the inputs between calls; the cause is named). Never FASTER.

CPU-capable: no.
"""
import torch
import torch.nn as nn


class _SideRelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, stream):
        with torch.cuda.stream(stream):  # BUG (deliberate): never waits, never joined
            y = torch.relu(x)
        return y

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.stream = torch.cuda.Stream(priority=-1) if torch.cuda.is_available() else None

    def forward(self, x):
        if self.stream is None or not x.is_cuda:
            return torch.relu(x)
        return _SideRelu.apply(x, self.stream)
