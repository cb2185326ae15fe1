"""Scan fixture (never imported): a candidate that tampers with the harness instead of computing.

Expected warnings: torch_attribute_reassignment, timing_tampering, comparison_tampering,
tf32_or_matmul_precision, rng_reseed, environment_read, introspection, file_io, tensor_subclass.
"""
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = True
torch.manual_seed(0)

_real_sync = torch.cuda.synchronize
time.perf_counter = lambda: 0.0
torch.allclose = lambda *args, **kwargs: True
F.relu = lambda x, inplace=False: x

if os.environ.get("KBV_PROTOCOL") == "strict":
    sys._getframe(1).f_locals["tolerance"] = 1.0

with open("/tmp/reference_output.pt", "rb") as f:
    _stolen = f.read()


class Passthrough(torch.Tensor):
    pass


class ModelNew(nn.Module):
    def forward(self, x):
        return F.relu(x)
