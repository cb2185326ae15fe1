import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Fully connected layer, group normalisation over groups of features, then
    hardtanh clipping to [-1, 1]:
    y = hardtanh(groupnorm(x @ W^T + b)).

    x: [batch_size, in_features] -> y: [batch_size, out_features]
    (default 8192 x 2048 -> 4096, 32 groups of 128 features)
    """

    def __init__(self, in_features: int, out_features: int, num_groups: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(num_groups, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(self.gn(self.linear(x)), min_val=-1.0, max_val=1.0)


batch_size = 8192
in_features = 2048
out_features = 4096
num_groups = 32

KBV_SMALL = {"batch_size": 32, "in_features": 128, "out_features": 96, "num_groups": 8}


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups]
