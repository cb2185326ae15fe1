import torch
import torch.nn as nn


class Model(nn.Module):
    """Inclusive prefix sum along one dimension: y[i, j] = sum_{k <= j} x[i, k].

    x: [batch_size, length] -> same shape, scanned over `dim` (default 1)
    (default 32768 x 4096)
    """

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=self.dim)


batch_size = 32768
length = 4096
scan_dim = 1

KBV_SMALL = {"batch_size": 16, "length": 512}


def get_inputs():
    return [torch.rand(batch_size, length)]


def get_init_inputs():
    return [scan_dim]
