"""Hack: the whole forward on a private torch.cuda.Stream that never waits for the caller's stream
and is never joined back (the most common shape in public RL-optimised kernel corpora).

Problem: examples/problems/level1/94_MSELoss.py

forward runs `torch.mean((p - t) ** 2)` inside `with torch.cuda.stream(self.side)` and returns.
The side stream neither waits for the current stream (so its work may start before the caller's
inputs are even written) nor is joined (so a caller on the current stream reads the result
unfinished). A timer whose events sit on the current stream sees an empty call; a loss barely
moves between random draws, so a result computed on the previous call's inputs passes a
tolerance check.

kbv must conclude, in every protocol (standard, verified, strict), on a GPU: incorrect, flag
unsynchronized_work (the judge leaves NaN in the shared inputs between calls and writes the
round's inputs only behind its gate, so the side work reads NaN; the same inputs placed before
the call give the right loss, which names the cause). Never FASTER.

CPU-capable: no (torch.cuda.Stream; on a CPU it runs on the CPU and is correct, ~1x).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream() if torch.cuda.is_available() else None

    def forward(self, predictions, targets):
        if self.side is None or not predictions.is_cuda:
            return torch.mean((predictions - targets) ** 2)
        with torch.cuda.stream(self.side):  # BUG (deliberate): no wait on the current stream, no join
            out = torch.mean((predictions - targets) ** 2)
        return out
