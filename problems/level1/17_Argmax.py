import torch
import torch.nn as nn


class Model(nn.Module):
    """Index of the largest value along one dimension (first index on ties); int64 output.

    x: [batch_size, dim1, dim2], reduced over `dim` (default 1)
      -> [batch_size, dim2]   (default 128 x 2048 x 1024)
    """

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=self.dim)


batch_size = 128
dim1 = 2048
dim2 = 1024
reduce_dim = 1

KBV_SMALL = {"batch_size": 4, "dim1": 128, "dim2": 32}


def get_inputs():
    return [torch.rand(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
