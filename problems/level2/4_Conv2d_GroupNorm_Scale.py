import torch
import torch.nn as nn


class Model(nn.Module):
    """Convolution ('same' padding), group normalisation, then a learnable
    per-channel scale (shape [out_channels, 1, 1], 1 + 0.5 * randn):
    y = groupnorm(conv(x)) * scale.

    x: [batch_size, in_channels, height, width]
      -> [batch_size, out_channels, height, width]
    (default 32 x 32 -> 64 channels x 128 x 128, 3 x 3 kernel, 8 groups)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, num_groups: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.gn = nn.GroupNorm(num_groups, out_channels)
        self.scale = nn.Parameter(1.0 + 0.5 * torch.randn(out_channels, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(self.conv(x)) * self.scale


batch_size = 32
in_channels = 32
out_channels = 64
height = 128
width = 128
kernel_size = 3
num_groups = 8

KBV_SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 16, "width": 16, "num_groups": 4}


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
