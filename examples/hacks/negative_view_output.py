"""Hack: wrong values whose memory holds the right ones (examples/problems/level1/19_ReLU.py).

forward returns torch._neg_view(relu(x)): a tensor whose value is -relu(x) (torch's lazy negative
bit) over memory that holds relu(x). A judge that reads the output's bytes without the bit sees
the reference's values. kbv makes an output carrying a negative or conjugate bit into the values
it stands for before the judge reads it: incorrect under every protocol (tests/integration
EvalCli.ANegativeViewIsJudgedByItsValuesNotItsMemory; its honest twin, the right values in a
negative view, is correct).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch._neg_view(torch.relu(x))
