"""Hack: switches eager PyTorch's fast paths off at import (oneDNN, cuDNN, the fused SDPA
backends, all but one intra-op thread) and switches them back on inside its own forward.

Problem: examples/problems/level1/40_Linear_ReLU.py

In a harness that runs the baseline in the candidate's process (KernelBench's own), every
baseline call after the import runs without oneDNN/cuDNN, without flash and memory-efficient
attention and on one thread, while the candidate's forward restores them for itself and
switches them off again on the way out: the same F.linear + relu then reads as a speedup (on a
multi-core CPU, roughly the core count). forward copies Model's parameter names (self.linear),
so kbv copies (and under strict re-initialises) its weights.

kbv must conclude: the baselines run in the judge's process, which the candidate cannot reach,
and the judge restores the backend state it captured once Model was built before every baseline
sample (torch_host/backend_state.hpp): correct, ~1x, no integrity flag, no_custom_kernel (info),
under every protocol. StrictCli RouteGone.TheHackRunsAsItsHonestFallback/backend_state_at_import.

CPU-capable: yes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

_FAST = {
    "threads": torch.get_num_threads(),
    "mkldnn": torch.backends.mkldnn.enabled,
    "cudnn": torch.backends.cudnn.enabled,
}


def _slow_everything():
    torch.set_num_threads(1)
    torch.backends.mkldnn.enabled = False
    torch.backends.cudnn.enabled = False
    torch.backends.cuda.enable_flash_sdp(False)
    torch.backends.cuda.enable_mem_efficient_sdp(False)


def _fast_again():
    torch.set_num_threads(_FAST["threads"])
    torch.backends.mkldnn.enabled = _FAST["mkldnn"]
    torch.backends.cudnn.enabled = _FAST["cudnn"]
    torch.backends.cuda.enable_flash_sdp(True)
    torch.backends.cuda.enable_mem_efficient_sdp(True)


_slow_everything()


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _fast_again()
        try:
            return torch.relu(F.linear(x, self.linear.weight, self.linear.bias))
        finally:
            _slow_everything()
