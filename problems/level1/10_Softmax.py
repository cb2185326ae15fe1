import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over the last dimension: y[i, j] = exp(x[i, j]) / sum_k exp(x[i, k]).

    x: [batch_size, dim] -> y: [batch_size, dim]   (default 524288 rows of 256)

    The row length is kept at 256 on purpose: softmax outputs are about 1 / dim,
    and with atol = 1e-3 a softmax over thousands of columns of torch.rand
    inputs is matched by the constant 1 / dim. Over 256 columns the outputs
    span roughly 2e-3..6e-3, so a constant fails on x1, x3, x-1 and the fresh
    draws; only x0.01 (nearly uniform rows) is non-discriminative.
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


# Degeneracy note: x0.01 (near-uniform rows) is matched by a constant; see the docstring.
batch_size = 524288
dim = 256

KBV_SMALL = {"batch_size": 64}


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
