import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that performs a ReLU activation."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 4096
dim = 16384

# kbv: overrides of the module-level constants above for a small (CPU) run.
# kbv setattr's them on the module after import, before calling get_init_inputs/get_inputs.
KBV_SMALL = {"batch_size": 16, "dim": 1024}


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []  # No special initialization inputs needed
