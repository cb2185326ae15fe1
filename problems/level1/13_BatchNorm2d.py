import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D batch normalisation (nn.BatchNorm2d, eps = 1e-5, learnable affine).

    The module runs as constructed, i.e. in training mode: each channel is
    normalised with the mean and biased variance of the current batch over
    (batch, height, width), and the running statistics are updated as a side
    effect that does not change the output. The running statistics start at
    non-trivial values so that, should a harness switch to eval mode, the
    output still differs from the input.

    x: [batch_size, channels, height, width] -> same shape
    (default 32 x 64 x 256 x 256)
    """

    def __init__(self, channels: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.linspace(-0.5, 0.5, channels))
            self.bn.running_var.copy_(torch.linspace(0.25, 2.0, channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


batch_size = 32
channels = 64
height = 256
width = 256

KBV_SMALL = {"batch_size": 4, "channels": 8, "height": 16, "width": 16}


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
