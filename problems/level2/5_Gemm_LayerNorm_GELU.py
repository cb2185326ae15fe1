import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Fully connected layer, layer normalisation over the features, exact GELU:
    y = gelu(layernorm(x @ W^T + b)).

    x: [batch_size, in_features] -> y: [batch_size, out_features]
    (default 4096 x 4096 -> 4096)
    """

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.norm(self.linear(x)))


batch_size = 4096
in_features = 4096
out_features = 4096

KBV_SMALL = {"batch_size": 32, "in_features": 128, "out_features": 96}


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
