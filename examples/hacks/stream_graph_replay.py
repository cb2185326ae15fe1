"""Hack: a CUDA graph of the computation, captured once on static buffers, and each call copies
the input in and replays the graph on a side stream that never waits for the caller's stream and
is never joined.

Problem: examples/problems/level1/19_ReLU.py

kbv must conclude, in every protocol, on a GPU: incorrect, flag unsynchronized_work (the copy and
the replay run before the round's inputs are written, on the NaN the judge leaves there). Never
FASTER.

CPU-capable: no.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream() if torch.cuda.is_available() else None
        self.graph = None

    def _capture(self, x):
        self.static_in = torch.empty_like(x)
        self.static_in.copy_(x)
        with torch.cuda.stream(self.side):
            torch.relu(self.static_in)  # warm-up outside the capture
        torch.cuda.current_stream().wait_stream(self.side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, stream=self.side):
            self.static_out = torch.relu(self.static_in)

    def forward(self, x):
        if self.side is None or not x.is_cuda:
            return torch.relu(x)
        if self.graph is None or self.static_in.shape != x.shape:
            self._capture(x)
        with torch.cuda.stream(self.side):  # BUG (deliberate): no wait for x, no join
            self.static_in.copy_(x, non_blocking=True)
            self.graph.replay()
        return self.static_out
