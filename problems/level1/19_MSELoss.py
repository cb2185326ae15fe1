import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean squared error between predictions and targets: mean((p - t)^2).

    predictions: [batch_size, dim], targets: [batch_size, dim] -> scalar []
    (default 4096 x 32768 each)
    """

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        diff = predictions - targets
        return torch.mean(diff * diff)


# Degeneracy note: a scalar; on x0.01 the loss is ~1.7e-5, so zeros passes there.
batch_size = 4096
dim = 32768

KBV_SMALL = {"batch_size": 16, "dim": 1024}


def get_inputs():
    return [torch.rand(batch_size, dim), torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
