"""Honest (red team, session 22): a first call that launches a million small kernels, as an
autotuner's first call does (Triton's @autotune, inductor's benchmarking), then the ReLU.

Problem: examples/problems/level1/19_ReLU.py

The first forward() tries "configurations": it times a tiny kernel a million times on the
current stream and synchronises, once, then runs torch.relu (the "chosen" configuration). Every
kernel is on the call's stream and ends before forward() returns: nothing is unjoined.

The first call is a checked call, traced by the sandbox (sandbox/call_trace.hpp): CUPTI hands
every kernel's record to the tracer, which kept them all in memory (a few hundred bytes each,
names included) and decoded them on CUPTI's own thread, where a failed allocation (the sandbox's
memory limit) ends the process. Since session 22 a window keeps at most 2^18 records; the rest
count as dropped and the trace of that call says nothing (it never convicts on what it lost).

kbv must conclude (on a GPU): correct under standard, verified and strict, no
unsynchronized_work, never crashed. Its first call is slow (the gate's 50 ms timeout, the
million launches), which no figure times.

CPU-capable: no (its first call's loop is CUDA only; on a CPU it is plain torch.relu).
"""
import torch
import torch.nn as nn

TRIES = 1_000_000


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._tuned = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._tuned and x.is_cuda:
            probe = torch.zeros(1, device=x.device)
            for _ in range(TRIES):
                probe.add_(1.0)
            torch.cuda.synchronize(x.device)
            self._tuned = True
        return torch.relu(x)
