import torch
import torch.nn as nn


class Model(nn.Module):
    """Swish with a fixed slope: y = x * sigmoid(beta * x), element-wise.

    x: [batch_size, dim] -> y: [batch_size, dim]   (default 4096 x 32768, beta = 1.5)
    """

    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.beta * x)


batch_size = 4096
dim = 32768

KBV_SMALL = {"batch_size": 16, "dim": 1024}


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return [1.5]
