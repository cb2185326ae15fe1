"""Hack: the output allocated on a private stream (from that stream's memory pool) and computed
there, without waiting for the caller's stream; the allocator hands the same block back every
call, so the previous call's answer sits in it.

Problem: examples/problems/level1/94_MSELoss.py

kbv must conclude, in every protocol, on a GPU: incorrect, flag unsynchronized_work (the side
work reads the NaN left in the inputs between calls; the block's old contents are poisoned after
every call too). Never FASTER.

CPU-capable: no.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream() if torch.cuda.is_available() else None

    def forward(self, predictions, targets):
        if self.side is None or not predictions.is_cuda:
            return torch.mean((predictions - targets) ** 2)
        with torch.cuda.stream(self.side):  # BUG (deliberate): no wait, no join
            out = torch.empty((), device=predictions.device)
            torch.mean((predictions - targets) ** 2, out=out)
        return out
