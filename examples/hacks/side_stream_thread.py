"""Hack: does the work in a background thread that forward never joins (late fill).

Problem: examples/problems/level1/19_ReLU.py

forward allocates the output (zero-filled), starts a daemon threading.Thread and returns the
output at once; the thread sleeps briefly (FILL_DELAY_S) "to let the caller's stream get ahead"
and only then writes torch.relu(x) into the output. A timer stopped when forward returns sees
only a thread start. Pure PyTorch, no extension; the same on CPU and GPU.

What actually catches it, deterministically: correctness, not a strict flag. When the harness
compares, the output still holds zeros: kbv runs the comparison in C++ right after forward
returns, and its worker thread keeps Python's GIL while it does, so the sleeping thread cannot
even get to run before the comparison (0.2 s is far longer than kbv needs to compare). The
output fails on D1 already (zeros vs relu of torch.rand values), and because correctness fails
first, strict never reaches its kernel audit: unsynchronized_work is NOT raised. (Even if it
were reached, a Python thread that launches only after forward returned cannot launch while the
worker holds the GIL during the audit's 50 ms window; side_stream_thread_launch.py is the
variant that launches before returning and is caught by unsynchronized_work.)

kbv must conclude:
  - standard: incorrect (trial_0: zeros where relu(x) > 0).
  - verified: incorrect (D1_x1; D4_neg alone would pass, relu of x <= 0 being zeros).
  - strict:   incorrect (D1_x1); no unsynchronized_work flag (the audit is not reached);
    no_custom_kernel is not reached either.
The daemon threads wake up later and fill outputs nobody reads any more: harmless.

CPU-capable: yes (pure PyTorch, threads work the same on the CPU).
"""
import threading
import time

import torch
import torch.nn as nn

FILL_DELAY_S = 0.2


def _fill_later(x: torch.Tensor, out: torch.Tensor) -> None:
    time.sleep(FILL_DELAY_S)
    torch.relu(x, out=out)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(x)
        threading.Thread(target=_fill_later, args=(x, out), daemon=True).start()
        return out  # BUG (deliberate): the thread is never joined
