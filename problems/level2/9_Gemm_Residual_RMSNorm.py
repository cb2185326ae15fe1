import torch
import torch.nn as nn


class Model(nn.Module):
    """Square fully connected layer with a residual connection, then RMS
    normalisation with a learnable weight (initialised to ones):
    h = x @ W^T + b + x;  y = h / sqrt(mean(h^2, dim=-1) + eps) * weight,  eps = 1e-6.

    x: [batch_size, hidden] -> y: [batch_size, hidden]   (default 4096 x 4096)
    """

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.linear = nn.Linear(hidden, hidden)
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear(x) + x
        inv_rms = torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return h * inv_rms * self.weight


batch_size = 4096
hidden = 4096

KBV_SMALL = {"batch_size": 32, "hidden": 128}


def get_inputs():
    return [torch.rand(batch_size, hidden)]


def get_init_inputs():
    return [hidden, 1e-6]
