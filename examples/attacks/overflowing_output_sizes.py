"""Attack: an output descriptor whose element count overflows (19_ReLU, CPU).

As oversized_output_view.py, through a relay on the runner's channel, with sizes [2^40, 2^40] and
strides [0, 0]: the span is 4 bytes, so the reader's bounds check passed, and torch's from_blob
threw "numel: integer multiplication overflow", a c10::Error the judge caught nowhere near the
call: `internal_error` for a wrong kernel.
Red team, 2026-12-07: internal_error (CPU, reproduced).

kbv must conclude: `protocol_violation` (a descriptor of nothing the judge can view). Returns zeros.
"""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import rewrite_answers  # noqa: E402


def forge(msg):
    if msg.get("type") == "called" and msg.get("status") == "ok" and msg.get("outputs"):
        msg["outputs"][0]["sizes"] = [1 << 40, 1 << 40]
        msg["outputs"][0]["strides"] = [0, 0]
    return msg


rewrite_answers(forge)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)  # wrong
