import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Convolution ('same' padding), Mish, then a constant offset:
    y = mish(conv(x)) + add_value, mish(h) = h * tanh(softplus(h)).

    x: [batch_size, in_channels, height, width]
      -> [batch_size, out_channels, height, width]
    (default 32 x 64 -> 64 channels x 128 x 128, 3 x 3 kernel, add_value = 0.5)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, add_value: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.add_value = add_value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.mish(self.conv(x)) + self.add_value


batch_size = 32
in_channels = 64
out_channels = 64
height = 128
width = 128
kernel_size = 3
add_value = 0.5

KBV_SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 16, "width": 16}


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, add_value]
