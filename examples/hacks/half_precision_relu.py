"""Hack: compute in fp16 where the problem asks for fp32 (examples/problems/level1/19_ReLU.py).

fp16 has TF32's mantissa (10 bits): rounding to it moves a value by at most 2^-11 of itself, inside
atol = rtol = 1e-3, so on every draw whose values fp16 can hold (the problem's torch.rand and
verified's four scalings, strict's normal, heavy_tail up to 1000, zeros_ties, sparse_spike) this
ReLU passes the tolerance, as the red team's fp16 GEMM (`torch.mm(A.half(), B.half(),
out_dtype=torch.float32)`) and fp16 tanh-GELU passed verified and strict. fp16 does not have
fp32's range: beyond 65504 it is inf. Half-precision arithmetic is cheaper (half the bytes moved,
tensor cores): a speedup the protocol did not allow.

kbv must conclude: under strict, `incorrect` on the wide_range draw (inf where the reference is
finite), flagged `lower_precision`; under verified (no such draw), `correct` as before.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x.half()).float()
