import torch
import torch.nn as nn


class Model(nn.Module):
    """Layer normalisation over the last dimension with a learnable per-feature
    scale and shift (nn.LayerNorm(dim), eps = 1e-5):
    y = (x - mean) / sqrt(var + eps) * weight + bias.

    x: [batch_size, dim] -> y: [batch_size, dim]   (default 16384 x 8192)
    """

    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


batch_size = 16384
dim = 8192

KBV_SMALL = {"batch_size": 32, "dim": 512}


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return [dim]
