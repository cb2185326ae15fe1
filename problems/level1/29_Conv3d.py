import torch
import torch.nn as nn


class Model(nn.Module):
    """3-D convolution, 3 x 3 x 3 kernel, 'same' padding, with bias.

    x: [batch_size, in_channels, depth, height, width]
      -> [batch_size, out_channels, depth, height, width]
    (default 8 x 32 -> 64 channels x 32 x 64 x 64)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 8
in_channels = 32
out_channels = 64
depth = 32
height = 64
width = 64
kernel_size = 3

KBV_SMALL = {"batch_size": 1, "in_channels": 4, "out_channels": 8, "depth": 8, "height": 8, "width": 8}


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
