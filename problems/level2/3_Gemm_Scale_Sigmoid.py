import torch
import torch.nn as nn


class Model(nn.Module):
    """Fully connected layer, multiplied by a constant, then sigmoid:
    y = sigmoid(scale * (x @ W^T + b)).

    x: [batch_size, in_features] -> y: [batch_size, out_features]
    (default 8192 x 2048 -> 4096, scale = 2.0)
    """

    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.linear(x) * self.scale)


batch_size = 8192
in_features = 2048
out_features = 4096
scale = 2.0

KBV_SMALL = {"batch_size": 32, "in_features": 128, "out_features": 96}


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]
