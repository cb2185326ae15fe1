"""Attack: starve the judge of device memory (examples/problems/level1/19_ReLU.py, GPU).

A true ReLU for its first calls; from then on, at each call, it takes every byte of device memory
it can get (raw blocks through torch's allocator, never freed) and returns zeros. The judge's next
step that needs memory (the reference of the call, a baseline, a comparison) then runs out.
Before issue 34 that ended the verdict as `problem_error` ("eager_tf32_on: Model.forward:
OutOfMemoryError", the red team on the H200 under verified), which blames the problem and leaves
the candidate out of every score; a reference that ran out in correctness skipped its draw.

kbv must conclude: the candidate's own outcome (`runtime_error`, flag `judge_starved`, the reason
saying how much its processes held against the judge), never `problem_error` or `internal_error`.
"""
import torch
import torch.nn as nn

HONEST_CALLS = 3
_calls = 0
_hoard = []


def _take_everything():
    block = 1 << 30
    while block >= (1 << 20):
        try:
            _hoard.append(torch.empty(block, dtype=torch.uint8, device="cuda"))
        except torch.OutOfMemoryError:
            block //= 2


class ModelNew(nn.Module):
    def forward(self, x):
        global _calls
        _calls += 1
        if _calls <= HONEST_CALLS:
            return torch.relu(x)
        out = torch.zeros_like(x)  # its own output first: the judge, not the candidate, runs short
        _take_everything()
        return out
