import torch
import torch.nn as nn


class Model(nn.Module):
    """A long element-wise chain on a large tensor (one fused pass is the ideal kernel):
    y = clamp(tanh(x * scale + bias), clamp_min, clamp_max) * multiplier,
    with learnable per-column bias (0.2 * randn) and multiplier (1 + 0.25 * randn),
    both of shape [dim], broadcast over rows.

    x: [batch_size, dim] -> y: [batch_size, dim]
    (default 4096 x 32768, scale = 2.0, clamp to [-0.75, 0.75])
    """

    def __init__(self, dim: int, scale: float, clamp_min: float, clamp_max: float):
        super().__init__()
        self.scale = scale
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max
        self.bias = nn.Parameter(0.2 * torch.randn(dim))
        self.multiplier = nn.Parameter(1.0 + 0.25 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * self.scale
        y = y + self.bias
        y = torch.tanh(y)
        y = torch.clamp(y, min=self.clamp_min, max=self.clamp_max)
        return y * self.multiplier


batch_size = 4096
dim = 32768
scale = 2.0
clamp_min = -0.75
clamp_max = 0.75

KBV_SMALL = {"batch_size": 16, "dim": 1024}


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return [dim, scale, clamp_min, clamp_max]
