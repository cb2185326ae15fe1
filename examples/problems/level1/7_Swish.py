import torch
import torch.nn as nn


class Model(nn.Module):
    """y = x * sigmoid(beta * x)"""

    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.beta * x)


batch_size = 8192  # 8192 x 16384 fp32 = 512 MiB per tensor (4096 x 65536 is too big here)
dim = 16384

# kbv: overrides of the module-level constants above for a small (CPU) run.
# kbv setattr's them on the module after import, before calling get_init_inputs/get_inputs.
KBV_SMALL = {"batch_size": 16, "dim": 1024}


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return [1.5]
