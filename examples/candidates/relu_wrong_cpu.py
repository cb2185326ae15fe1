"""Incorrect pure-PyTorch ReLU for level1/19_ReLU.py (runs anywhere, no extension).

Clamps at 0.1 instead of 0: on torch.rand inputs every value below 0.1 (about 10% of them)
comes out as 0.1, an error of up to 0.1, far above the 1e-3 tolerance.

kbv must conclude: incorrect under every protocol (on CPU and on GPU); no custom kernel.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clamp(min=0.1)
