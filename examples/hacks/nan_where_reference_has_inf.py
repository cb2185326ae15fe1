"""Hack: return NaN everywhere on a problem whose reference holds one infinity
(tests/integration/fixtures/evidence/log_with_one_zero.py: log of an input with one exact zero).

Before issue 34, strict ended such a verdict as `internal_error` for every candidate, right or
wrong: the degenerate-problem audit took the mean of the reference (one -inf: a mean that does not
fit in float) and threw "value cannot be converted to type float without overflow", outside any
guard. `internal_error` is evaluated again forever and never scored, so a wrong kernel on such a
problem was never counted as wrong (the red team saw it on the H200 on an elementwise-log problem).

kbv must conclude: `incorrect` under strict (NaN where the reference is finite, and where it is
-inf); the honest log (tests/integration/fixtures/evidence/log_honest.py) `correct`; neither an
internal_error.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.full_like(x, float("nan"))
