import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix-vector product y = A @ x (x given as a one-column matrix).

    A: [M, K], x: [K, 1] -> y: [M, 1]   (default M = K = 16384: reading A,
    1 GiB, is the whole cost)
    """

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, x)


M = 16384
K = 16384

KBV_SMALL = {"M": 256, "K": 512}


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, 1)]


def get_init_inputs():
    return []
