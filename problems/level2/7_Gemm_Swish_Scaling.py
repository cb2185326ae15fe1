import torch
import torch.nn as nn


class Model(nn.Module):
    """Fully connected layer, swish (SiLU), then a constant factor:
    h = x @ W^T + b;  y = h * sigmoid(h) * scaling.

    x: [batch_size, in_features] -> y: [batch_size, out_features]
    (default 4096 x 4096 -> 4096, scaling = 2.0)
    """

    def __init__(self, in_features: int, out_features: int, scaling: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scaling = scaling

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear(x)
        return h * torch.sigmoid(h) * self.scaling


batch_size = 4096
in_features = 4096
out_features = 4096
scaling = 2.0

KBV_SMALL = {"batch_size": 32, "in_features": 128, "out_features": 96}


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling]
