import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean over the last dimension (dimension dropped).

    x: [batch_size, dim] -> y: [batch_size]   (default 32768 x 8192)
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=-1)


# Degeneracy note: row means of torch.rand concentrate near 0.5 (sd ~0.003 at
# dim 8192), which still beats the 1e-3 tolerance on x1 and x3, but on x0.01 the
# means are 0.005 +- 3e-5 and a constant passes.
batch_size = 32768
dim = 8192

KBV_SMALL = {"batch_size": 64, "dim": 512}


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
