import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D average pooling, 3 x 3 window, stride 1, padding 1 (zero padding counted
    in the divisor, i.e. count_include_pad=True): a 3 x 3 box blur.

    x: [batch_size, channels, height, width] -> same shape   (default 32 x 64 x 256 x 256)
    """

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch_size = 32
channels = 64
height = 256
width = 256
kernel_size = 3
stride = 1
padding = 1

KBV_SMALL = {"batch_size": 2, "channels": 4, "height": 32, "width": 32}


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]
