"""Hanging candidate for level1/19_ReLU.py: forward never returns.

forward spins forever in pure Python (`while True: pass`), holding the GIL; it never reaches
the GPU. It masks no signals, so SIGTERM or SIGKILL ends it. Behaves the same on CPU and on GPU.

kbv must conclude: timeout under every protocol, after its per-candidate time limit; the worker
is killed and kbv moves on to the next candidate.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        while True:
            pass
        return torch.relu(x)  # never reached
