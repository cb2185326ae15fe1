import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 2-D convolution that doubles the spatial size (kernel 4, stride 2, padding 1).

    x: [batch, in_channels, height, width]
      -> [batch, out_channels, 2 * height, 2 * width]
    (default batch 32, 128 -> 64 channels, 64 x 64 -> 128 x 128 pixels)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.deconv(x)


batch_size = 32
in_channels = 128
out_channels = 64
height = 64
width = 64
kernel_size = 4
stride = 2
padding = 1

KBV_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 4, "height": 8, "width": 8}


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
