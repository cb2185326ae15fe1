import torch
import torch.nn as nn


class Model(nn.Module):
    """Low-rank product of a tall, skinny matrix and a short, wide one: C = A @ B.

    A: [M, K], B: [K, N] with K << M, N -> C: [M, N]
    (default M = N = 16384, K = 64: little arithmetic per output, so writing
    the 1 GiB result dominates).
    """

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


# Degeneracy note: at the KBV_SMALL size (K = 16) the x0.01 outputs (~4e-4) are
# matched by zeros and a constant; at the default size (K = 64) every distribution
# discriminates.
M = 16384
K = 64
N = 16384

KBV_SMALL = {"M": 256, "K": 16, "N": 192}


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
