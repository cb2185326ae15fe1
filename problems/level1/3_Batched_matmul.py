import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched matrix product: C[b] = A[b] @ B[b] for every batch entry b.

    A: [batch, m, k], B: [batch, k, n] -> C: [batch, m, n]
    (default batch = 128, m = 512, k = 1024, n = 512)
    """

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


# Degeneracy note: at the KBV_SMALL size a constant matches the x0.01 outputs; at
# the default size every distribution discriminates.
batch = 128
m = 512
k = 1024
n = 512

KBV_SMALL = {"batch": 4, "m": 32, "k": 64, "n": 48}


def get_inputs():
    return [torch.rand(batch, m, k), torch.rand(batch, k, n)]


def get_init_inputs():
    return []
