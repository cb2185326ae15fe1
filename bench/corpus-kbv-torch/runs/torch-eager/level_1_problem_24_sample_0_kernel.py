"""PyTorch eager, no custom kernel (sample 0): kbv's own cost at KernelBench's sizes, no build."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.tanh(x)
