import torch
import torch.nn as nn


class Model(nn.Module):
    """Convolution, ReLU, then a learnable per-channel bias added after the activation:
    y = relu(conv(x)) + bias, bias of shape [out_channels, 1, 1] (randn * 0.1).

    x: [batch_size, in_channels, height, width]
      -> [batch_size, out_channels, height - 2, width - 2]   (3 x 3 kernel, no padding)
    (default 32 x 64 -> 128 channels x 128 x 128)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x)) + self.bias


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
