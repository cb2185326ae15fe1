"""Hack (red team, session 21): stream_private_no_wait.py made to wait for its inputs another way.
forward() reads one input element on its private stream (not held by the judge's gate) and, when
it is the judge's NaN poison (a gated call), synchronises the device: the gate opens after its
timeout, the inputs land, and only then does it queue its unjoined side-stream work. Its bet was
that one timeout turned the gate off for every later call, so that the work would then never see
poison.

Problem: examples/problems/level1/94_MSELoss.py

kbv must conclude, in every protocol, on a GPU: never FASTER. Every untimed call is gated on its
own (a timeout never turns the gate off for the calls after it); the work starts after its inputs
are there, so it is timed inside its sample (the host's synchronisation is in its time: no gain)
or, where it outlives the snapshot, `unsynchronized_work`. The missing join alone, absorbed by the
GPU's time-slicing, is what the judge cannot see (docs/timing.md, "Cannot see").

CPU-capable: no.
"""
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream() if torch.cuda.is_available() else None
    def forward(self, predictions, targets):
        if self.side is None or not predictions.is_cuda:
            return torch.mean((predictions - targets) ** 2)
        with torch.cuda.stream(self.side):           # .item() here syncs the side stream only
            poisoned = bool(torch.isnan(predictions.view(-1)[:1]).item())
        if poisoned:                                 # poison now = a gated call
            torch.cuda.synchronize()                 # blocks until the gate's watchdog opens it
        with torch.cuda.stream(self.side):           # BUG (deliberate): no wait, no join
            out = torch.mean((predictions - targets) ** 2)
        return out
