"""Attack: choose the size of the judge's copy of an output (19_ReLU, CPU; on a GPU no relay is needed).

The judge copies every output of a checked call (its snapshot). Its size was the output's element
count, and a view's count was checked only against the bytes it spans: a stride-0 view of 4 bytes
may claim 2^38 elements. On a GPU `torch.empty((), device="cuda").expand(1 << 20, 1 << 20)` is
returned as it is; on the CPU the runner packs outputs densely, so a relay on the runner's channel
rewrote the descriptor of every `called` answer to sizes [2^38], strides [0]. The judge's 1 TiB
copy failed outside any guard: `internal_error` for a wrong kernel, on demand, and again on every
`kbv run` (which evaluates internal_error again). On a GPU the copy counted as the judge's memory,
so an output sized to fill the device also starved the reference of the draws the kernel fails
(skipped, so `correct`), or of every draw (`problem_error`).
Red team, 2026-12-07: internal_error (CPU, reproduced); the GPU variants read from the source. The
first bound's byte count wrapped around for 2^62 float32 elements (2^64 bytes: 0), which the second
review found: this attack now claims that many.

kbv must conclude: `incorrect` (the outputs hold more elements than the reference's ever did: not
its shapes), before any copy. Returns zeros (wrong).
"""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import rewrite_answers  # noqa: E402


def forge(msg):
    if msg.get("type") == "called" and msg.get("status") == "ok" and msg.get("outputs"):
        msg["outputs"][0]["sizes"] = [1 << 62]
        msg["outputs"][0]["strides"] = [0]
    return msg


rewrite_answers(forge)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)  # wrong
