import torch
import torch.nn as nn


class Model(nn.Module):
    """Cumulative sum of x where mask is true, along dim 1: x, mask [rows, length] -> [rows, length]
    (4096 rows of 32768). Late prefix sums of mixed-sign values cancel: their relative error is
    large for any summation order."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=self.dim)


rows = 4096
length = 32768
dim = 1

KBV_SMALL = {"rows": 16, "length": 1024}


def get_inputs():
    return [torch.rand(rows, length), torch.randint(0, 2, (rows, length)).bool()]


def get_init_inputs():
    return [dim]
