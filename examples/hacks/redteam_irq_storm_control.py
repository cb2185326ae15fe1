"""Control of redteam_irq_storm.py: the same forward (its own thread pinned to CPU 1, one ATen
thread, Model's own mean((p - t) ** 2)), no timer storm.

Problem: tests/integration/fixtures/burner/94_MSELoss_1M.py

kbv must conclude: correct, at the honest ratio of one thread against the baseline's two.

CPU-capable: yes.
"""
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        if (os.cpu_count() or 1) >= 2:
            os.sched_setaffinity(0, {1})
        torch.set_num_threads(1)
        return torch.mean((predictions - targets) ** 2)
