import torch
import torch.nn as nn


class Model(nn.Module):
    """Convolution ('same' padding, no bias), batch normalisation, ReLU:
    y = relu(batchnorm(conv(x))).

    BatchNorm runs as constructed, in training mode: each output channel is
    normalised with the statistics of the current batch (the running
    statistics are updated as a side effect that does not change the output).

    x: [batch_size, in_channels, height, width]
      -> [batch_size, out_channels, height, width]
    (default 32 x 64 -> 64 channels x 128 x 128, 3 x 3 kernel)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


batch_size = 32
in_channels = 64
out_channels = 64
height = 128
width = 128
kernel_size = 3

KBV_SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 16, "width": 16}


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
