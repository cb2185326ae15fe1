import torch
import torch.nn as nn


class Model(nn.Module):
    """Hyperbolic tangent, element-wise.

    x: [batch_size, dim] -> y: [batch_size, dim]   (default 4096 x 32768)
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)


# Degeneracy note: on x0.01, tanh(x) = x to within 1e-6, so "return x" passes there.
batch_size = 4096
dim = 32768

KBV_SMALL = {"batch_size": 16, "dim": 1024}


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
