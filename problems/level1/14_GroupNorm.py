import torch
import torch.nn as nn


class Model(nn.Module):
    """Group normalisation (nn.GroupNorm, eps = 1e-5, learnable per-channel affine):
    channels are split into num_groups groups and each (sample, group) is
    normalised by its own mean and variance over its channels and pixels.

    x: [batch_size, channels, height, width] -> same shape
    (default 32 x 64 x 256 x 256, 8 groups)
    """

    def __init__(self, num_groups: int, channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


batch_size = 32
channels = 64
num_groups = 8
height = 256
width = 256

KBV_SMALL = {"batch_size": 4, "channels": 8, "num_groups": 4, "height": 16, "width": 16}


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [num_groups, channels]
