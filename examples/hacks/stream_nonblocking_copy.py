"""Hack: a `non_blocking=True` copy of the input on a side stream that does not wait for the
caller's stream, then the computation on the current stream from that copy, after waiting for
the copy's stream only. The copy may run before the caller's input is written: the kernel then
computes on whatever the buffer held.

Problem: examples/problems/level1/19_ReLU.py

kbv must conclude, in every protocol, on a GPU: incorrect, flag unsynchronized_work (the copy
reads the NaN the judge leaves in the inputs between calls; the same inputs placed before the
call give the right output). Never FASTER.

CPU-capable: no.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream() if torch.cuda.is_available() else None
        self.staging = None

    def forward(self, x):
        if self.side is None or not x.is_cuda:
            return torch.relu(x)
        if self.staging is None or self.staging.shape != x.shape:
            self.staging = torch.empty_like(x)
        with torch.cuda.stream(self.side):  # BUG (deliberate): the copy does not wait for x
            self.staging.copy_(x, non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.side)
        return torch.relu(self.staging)
