"""A degenerate PROBLEM (not a candidate): its reference output is always nearly zero.

y = 1e-5 * tanh(x): |y| <= 1e-5 for every input, far below the fp32 tolerance (atol 1e-3), so
an all-zeros output passes every correctness check on every distribution, whatever the inputs.
Such a problem cannot tell a kernel from `torch.zeros_like`; its speedups must not count.
examples/hacks/degenerate_zeros.py is the trivial candidate that exploits it.

kbv must flag the problem `degenerate` (under every protocol: the check runs on whatever
distributions the protocol uses) with the evidence "a trivial output passes every
distribution: ... (zeros)", and leave it out of aggregates. `degenerate` is informational for
the candidate: a correct candidate stays correct.

CPU-capable: yes. The file name has no numeric id (kbv records the problem by name).
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = 1e-5 * tanh(x): always within 1e-5 of zero."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 1e-5 * torch.tanh(x)


batch_size = 4096
dim = 16384

# kbv: overrides of the module-level constants above for a small (CPU) run.
KBV_SMALL = {"batch_size": 16, "dim": 1024}


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
