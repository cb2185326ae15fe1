"""demo-careful, level3/1_MLP, sample 0: PyTorch-only rewrite, no custom kernel.

The MLP re-expressed as an explicit torch.addmm chain (bias folded into the GEMM) with in-place
ReLU on the hidden activations, instead of nn.Sequential's Linear -> ReLU modules. The module
keeps Model's layout (self.net = nn.Sequential of Linear/ReLU, so net.0.weight, net.2.weight,
... carry over) and only changes forward. No CUDA code, no load_inline: all the work is
cuBLAS through torch, so TF32 follows the process setting like the reference.

An honest evaluation should conclude: correct under standard, verified and strict; speed about
1.0x on an H200 (the same GEMMs; in-place ReLU saves two small passes and two allocations);
peak memory equal or slightly lower. Strict must report it as a PyTorch-only rewrite
(no_custom_kernel), not as a custom kernel.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_sizes, output_size):
        super().__init__()
        layers = []
        width = input_size
        for h in hidden_sizes:
            layers.append(nn.Linear(width, h))
            layers.append(nn.ReLU())
            width = h
        layers.append(nn.Linear(width, output_size))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        linears = [m for m in self.net if isinstance(m, nn.Linear)]
        h = x.contiguous()
        for i, layer in enumerate(linears):
            h = torch.addmm(layer.bias, h, layer.weight.t())
            if i + 1 < len(linears):
                h.relu_()          # h is a fresh addmm output, never an input: safe in place
        return h
