"""Exiting candidate for level1/19_ReLU.py: forward ends the process with os._exit(3).

os._exit skips Python's clean-up (no exception, no atexit, no flushing): the worker simply
disappears with exit status 3. Behaves the same on CPU and on GPU.

kbv must conclude: crashed (the worker exited with status 3 while running the candidate) under
every protocol; kbv itself and the other candidates are unaffected.
"""
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        os._exit(3)
        return torch.relu(x)  # never reached
