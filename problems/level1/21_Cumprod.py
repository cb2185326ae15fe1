import torch
import torch.nn as nn


class Model(nn.Module):
    """Inclusive prefix product along one dimension: y[i, j] = prod_{k <= j} x[i, k].

    x: [batch_size, length] -> same shape, scanned over `dim` (default 1)
    (default 524288 rows of length 64)

    Chosen against degeneracy: the inputs lie in [0.75, 1.25), so on x1 the
    products wander around 1 instead of underflowing (a plain torch.rand input
    shrinks by ~e^-1 per step and is zero after ~90 steps, which rewards
    kernels that stop early). The scan is 64 long so that x3 (factors up to
    3.75) stays finite in fp32 (3.75^64 < 1e37) and fresh N(0, 1) draws
    (which shrink ~e^-0.64 per step) do not underflow either.
    """

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=self.dim)


batch_size = 524288
length = 64
scan_dim = 1

KBV_SMALL = {"batch_size": 256}


def get_inputs():
    return [0.75 + 0.5 * torch.rand(batch_size, length)]


def get_init_inputs():
    return [scan_dim]
