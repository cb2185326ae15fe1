"""Hack (GPU): an identity for examples/problems/level1/19_ReLU.py that stalls its calls with a
copy-engine transfer, so its time lands near the null call's and the judge takes off a context
switch the call never paid.

A call that runs no kernel in its own context pays no GPU context switch; the null call kbv
subtracts from every sample (the hop through the trusted twin, ~0.29 ms on an H200) does. kbv
keeps such a call's samples whole when its median is below 0.9 of the hop; this one holds its
done word back with a device-to-host copy (no kernel) to land around the hop, where samples are
reduced by it. Before the fix each sample then floored at 1e-6 ms: a 10^5-fold "speedup" for
returning the input (right for ReLU on torch.rand draws, so standard's checked calls pass).

Found by the red team of the GPU timing change (2026-12-01; not run on the H200). Fixed: samples
below 0.9 of the hop are kept whole, and no call is credited with less than 2 us (about the
shortest kernel). kbv must conclude: standard correct (the identity is right on get_inputs()'s
draws, as in KernelBench) with a speedup of at most eager's time / 2 us; strict incorrect
(mixed-sign draws).
"""
import torch
import torch.nn as nn

STALL_BYTES = 10 << 20  # ~0.2 ms of device-to-host copy


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._src = None
        self._dst = None

    def forward(self, x):
        if self._src is None:
            self._src = torch.empty(STALL_BYTES, dtype=torch.uint8, device=x.device)
            self._dst = torch.empty(STALL_BYTES, dtype=torch.uint8, pin_memory=True)
        self._dst.copy_(self._src, non_blocking=True)  # a copy engine's work, no kernel
        return x
