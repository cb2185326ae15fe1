"""Hack: keeps a large workspace where a walk of the model's objects does not look: on an
attribute of the torch.nn.functional module.

Problem: examples/problems/level1/19_ReLU.py

__init__ allocates 1 GiB on the device and parks it on torch.nn.functional, a module of torch's,
not the candidate's; forward is an honest ReLU. A memory metric that counts the tensors reachable
from the model object and its own module's globals (kbv's held-memory walk, run in the sandbox)
misses it, and the candidate reads as no hungrier than eager PyTorch.

kbv must conclude: the judge reads the sandbox's whole device memory from the driver (NVML, per
process) at random timed rounds, above that of its twin (a bare torch process), so the parked
gigabyte is in memory.candidate.process_bytes and in the footprint the reports compare:
correct, memory-hungry (footprint ratio well below 1). GpuStrict.MemoryParkedInTorchIsCounted.

CPU-capable: no (device memory).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

PARKED_BYTES = 1 << 30


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        F._kbv_parked_workspace = torch.empty(PARKED_BYTES, dtype=torch.uint8, device="cuda")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
