"""Hack: a reduction that reads only half of its terms (94_MSELoss) -- caught by strict's sparse_spike.

Every other column of (predictions - targets)^2 is summed and doubled. On dense random inputs of
16.7M terms the estimate is within ~0.05% of the mean, inside rtol = 1e-3, so standard and
verified call it correct at twice the "speed". It computes honestly when a probe of 4096 values
sees one above 10 in magnitude, so heavy-tailed inputs (where half a sample is a poor estimate)
see the honest kernel. strict's sparse_spike draw hides 16 spikes of 100-1000 per input among
N(0, 0.01^2) values that carry most of the sum: the probe misses them, the half-sum keeps a random
half of them, and the estimate is typically tens of per cent off. About 1 draw in 100 splits the
spikes evenly enough between the halves to pass; strict's checked calls on fresh inputs draw
sparse_spike again (then the flag is result_reuse).
kbv must conclude under strict: incorrect (sparse_spike); the static scan sees nothing.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        flat = predictions.reshape(-1)
        probe = flat[:: max(1, flat.numel() // 4096)]
        if probe.abs().max() > 10:
            return torch.mean((predictions - targets) ** 2)
        half = (predictions[:, ::2] - targets[:, ::2]) ** 2
        return half.mean()
