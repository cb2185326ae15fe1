"""A PROBLEM (not a candidate) that discriminates only when its parameters are re-drawn.

y = 1e-5 * tanh(x) + bias, with `bias` a zero-initialised parameter: as built, the output never
leaves [-1e-5, 1e-5] and zeros pass every draw of the inputs; strict's reinit_params draw sets
the bias to U(-0.5, 0.5), and then zeros fail. So the problem is not degenerate under strict, but
only that one draw shows it.

examples/hacks/skip_reinit_to_flag_degenerate.py is the candidate that uses this.

CPU-capable: yes. The file name has no numeric id (kbv records the problem by name).
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 1e-5 * torch.tanh(x) + self.bias


batch_size = 4096
dim = 16384

# kbv: overrides of the module-level constants above for a small (CPU) run.
KBV_SMALL = {"batch_size": 16, "dim": 1024}


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return [dim]
