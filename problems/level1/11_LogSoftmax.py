import torch
import torch.nn as nn


class Model(nn.Module):
    """Log-softmax over the last dimension: y = x - logsumexp(x, dim=-1, keepdim=True).

    x: [batch_size, dim] -> y: [batch_size, dim]   (default 4096 x 32768)
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=-1)


# Degeneracy note: on x0.01 the rows are nearly uniform, every output is about
# -log(dim) and a constant passes (rtol * |ref| ~ 1e-2). All other distributions
# discriminate.
batch_size = 4096
dim = 32768

KBV_SMALL = {"batch_size": 16, "dim": 1024}


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
