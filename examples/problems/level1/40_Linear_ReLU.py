import torch
import torch.nn as nn


class Model(nn.Module):
    """y = relu(x @ W^T + b): a model with parameters (self.linear.weight, self.linear.bias)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


batch_size = 4096
in_features = 4096
out_features = 4096

# kbv: overrides of the module-level constants above for a small (CPU) run.
# kbv setattr's them on the module after import, before calling get_init_inputs/get_inputs.
KBV_SMALL = {"batch_size": 8, "in_features": 64, "out_features": 32}


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
