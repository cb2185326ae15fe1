import torch
import torch.nn as nn


class Model(nn.Module):
    """Sum over one dimension, keeping it with size 1.

    x: [batch_size, dim1, dim2], reduced over `dim` (default 1)
      -> [batch_size, 1, dim2]   (default 128 x 4096 x 512)
    """

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 128
dim1 = 4096
dim2 = 512
reduce_dim = 1

KBV_SMALL = {"batch_size": 4, "dim1": 256, "dim2": 32}


def get_inputs():
    return [torch.rand(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
