import torch
import torch.nn as nn


class Model(nn.Module):
    """Depthwise 2-D convolution: every channel convolved with its own 3 x 3
    filter (groups = channels), 'same' padding, with bias.

    x: [batch_size, channels, height, width] -> same shape
    (default 32 x 128 x 128 x 128)
    """

    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2, groups=channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 32
channels = 128
height = 128
width = 128
kernel_size = 3

KBV_SMALL = {"batch_size": 2, "channels": 8, "height": 16, "width": 16}


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]
