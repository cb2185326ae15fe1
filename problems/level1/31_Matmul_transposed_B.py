import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix product with the second operand stored transposed: C = A @ B^T.

    A: [M, K], B: [N, K] -> C: [M, N]   (default M = 4096, N = 2048, K = 8192)
    """

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.transpose(0, 1))


# Degeneracy note: at the KBV_SMALL size a constant matches the x0.01 outputs; at
# the default size every distribution discriminates.
M = 4096
N = 2048
K = 8192

KBV_SMALL = {"M": 64, "N": 48, "K": 128}


def get_inputs():
    return [torch.rand(M, K), torch.rand(N, K)]


def get_init_inputs():
    return []
