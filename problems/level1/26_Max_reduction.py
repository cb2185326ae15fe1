import torch
import torch.nn as nn


class Model(nn.Module):
    """Maximum over a short, strided middle dimension.

    x: [batch_size, depth, inner] -> y: [batch_size, inner], max over dim 1
    (default 256 x 16 x 65536)

    The reduced dimension is short (16) on purpose: the maximum of thousands of
    torch.rand values is 1 - O(1e-3), which a constant matches within 1e-3.
    """

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=self.dim)


batch_size = 256
depth = 16
inner = 65536
reduce_dim = 1

KBV_SMALL = {"batch_size": 4, "inner": 1024}


def get_inputs():
    return [torch.rand(batch_size, depth, inner)]


def get_init_inputs():
    return [reduce_dim]
