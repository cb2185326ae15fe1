import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D convolution, 'same' padding, with bias.

    x: [batch, in_channels, height, width]
      -> [batch, out_channels, height, width]
    (default batch 32, 64 -> 128 channels, 128 x 128 pixels, 3 x 3 kernel)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 32
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3

KBV_SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 16, "width": 16}


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
