"""Hack: after computing its (correct) output, writes denormal floats into its input tensors,
hoping the baseline is timed on the same tensors: denormal arithmetic is many times slower on
most CPUs (and some GPU paths), so the baseline slows and the candidate looks fast.

Problem: examples/problems/level1/19_ReLU.py

forward computes relu(x) into a fresh tensor, then fills x with 1e-40 (a float32 denormal).
A harness that reuses one set of input tensors for the candidate and the baseline (KernelBench
times both on the same get_inputs() tensors) then times the baseline on denormals.

kbv must conclude: the judge times the baselines on its own copies of the inputs, which the
sandbox never sees, and draws fresh inputs into the candidate's buffers every round, so the
writes slow nothing but the candidate's own next call. Under strict the write itself is caught:
incorrect, input_mutated (the judge compares the shared inputs with its pristine copy after
correctness calls and checked timed calls). Under standard: correct, ~1x.
StrictCli StrictHack.CaughtByItsFlagUnderStrict/denormal_inputs.

CPU-capable: yes.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(x)
        x.fill_(1e-40)
        return y
