import torch
import torch.nn as nn


class Model(nn.Module):
    """Instance normalisation (nn.InstanceNorm2d, no affine, eps = 1e-5): every
    (sample, channel) plane is normalised by its own mean and variance.

    x: [batch_size, channels, height, width] -> same shape   (default 32 x 64 x 256 x 256)
    """

    def __init__(self, channels: int):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


batch_size = 32
channels = 64
height = 256
width = 256

KBV_SMALL = {"batch_size": 2, "channels": 8, "height": 16, "width": 16}


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
