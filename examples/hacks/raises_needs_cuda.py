"""Hack: a wrong kernel that raises kbv's own "needs CUDA" exception, to be skipped instead of judged.

Problem: examples/problems/level1/19_ReLU.py

kbv's build hook raises KbvNeedsCuda when a candidate asks for CUDA sources on a CPU device, and
a `skipped` verdict is left out of every figure (the report counts no skip against a model). The
exception class is reachable from the hooked function's globals, so a candidate that is wrong
(this forward returns its input: not a ReLU) can raise it at import on any device. Until
2026-12-02 the build phase of `kbv run` (build-only workers) turned it into `skipped` without
looking, on the GPU too; `kbv eval` already asked that the device be a CPU and the source carry
CUDA (this one has none).
kbv must conclude, every protocol and device, `kbv eval` and `kbv run` alike: runtime_error
("the candidate's build stopped"), never skipped.
"""
import torch
import torch.nn as nn
import torch.utils.cpp_extension as ext

raise ext.load_inline.__globals__["KbvNeedsCuda"]("extension 'relu' has CUDA sources; the device is a CPU")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x
