"""Hack: the work on a side stream that waits for the caller's stream, an event recorded after
it, and the event never waited on (the join forgotten: `done.synchronize()` is not called and
the current stream does not `wait_event`). A 2 ms busy-wait pads the side work so it always
outlives the call's end.

Problem: examples/problems/level1/19_ReLU.py

kbv must conclude, in every protocol, on a GPU: incorrect, flag unsynchronized_work (the output
read at the end of the call is unfinished: the poison the judge leaves in outputs between calls,
or part of the result; the outputs read again once the sandbox's work is over differ). Or, where
the GPU gives the whole side work the sandbox's time slice before the judge's end event, its
time is inside its sample: no gain (at most ~1x). Never FASTER.

CPU-capable: no.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream() if torch.cuda.is_available() else None

    def forward(self, x):
        if self.side is None or not x.is_cuda:
            return torch.relu(x)
        self.side.wait_stream(torch.cuda.current_stream())  # inputs ready: fine
        with torch.cuda.stream(self.side):
            torch.cuda._sleep(4_000_000)  # ~2 ms
            y = torch.relu(x)
            done = torch.cuda.Event()
            done.record()
        self.done = done  # BUG (deliberate): nobody waits for it
        return y
