"""PyTorch eager, no custom kernel (sample 1): kbv's own cost at KernelBench's sizes, no build."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)
