import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B with a long inner dimension: A [M, K], B [K, N] -> C [M, N] (M = N = 256, K = 131072).

    Every output sums 131072 products, so two correct kernels that sum in a different order
    differ by far more than an element-wise 1e-3 on mixed-sign inputs.
    """

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 256
N = 256
K = 131072

KBV_SMALL = {"M": 16, "N": 16, "K": 4096}


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
