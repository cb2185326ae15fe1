import torch
import torch.nn as nn


class Model(nn.Module):
    """Rectified linear unit, y = max(x, 0), element-wise.

    x: [batch_size, dim] -> y: [batch_size, dim]   (default 4096 x 32768)
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


# Degeneracy note: get_inputs() is non-negative, so on x1, x3 and x0.01 the output
# equals the input, and on x-1 it is all zeros: none of the four verified
# distributions tells a real ReLU from "return x" (or from zeros). Only fresh
# mixed-sign draws (normal, heavy_tail, zeros_ties) discriminate. Kept on purpose:
# this is the classic shortcut that the standard protocol rewards.
batch_size = 4096
dim = 32768

KBV_SMALL = {"batch_size": 16, "dim": 1024}


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
