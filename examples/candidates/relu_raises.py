"""Failing candidate for level1/19_ReLU.py: forward raises a Python exception.

forward raises RuntimeError("relu_raises: this candidate always fails in forward") before
computing anything. Importing and constructing ModelNew succeed. Same on CPU and on GPU.

kbv must conclude: runtime_error under every protocol, with the exception type and message
("relu_raises: this candidate always fails in forward") in the result.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("relu_raises: this candidate always fails in forward")
