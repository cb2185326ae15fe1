import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A.T @ B: A [K, M], B [K, N] -> C [M, N] (M = 1024, K = 4096, N = 2048)."""

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)


M = 1024
K = 4096
N = 2048

KBV_SMALL = {"M": 32, "K": 256, "N": 64}


def get_inputs():
    return [torch.rand(K, M), torch.rand(K, N)]


def get_init_inputs():
    return []
