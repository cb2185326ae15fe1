import torch
import torch.nn as nn


class Model(nn.Module):
    """Upsampling transposed convolution (kernel 4, stride 2, padding 1, no bias),
    a learnable per-channel bias (shape [out_channels, 1, 1], 0.5 * randn), tanh:
    y = tanh(conv_transpose(x) + bias).

    x: [batch_size, in_channels, height, width]
      -> [batch_size, out_channels, 2 * height, 2 * width]
    (default 16 x 128 -> 64 channels, 64 x 64 -> 128 x 128)
    """

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1, bias=False)
        self.bias = nn.Parameter(0.5 * torch.randn(out_channels, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.deconv(x) + self.bias)


batch_size = 16
in_channels = 128
out_channels = 64
height = 64
width = 64

KBV_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 4, "height": 8, "width": 8}


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
