"""Attack: starve the judge of device memory while holding less than the judge itself (GPU, a
problem whose tensors are a large part of the device: tests/gpu/test_judge_evidence_gpu.cpp
makes one of a sixth of the device).

The candidate knows the rule of issue 34: the judge blames it for an out-of-memory only when its
processes hold more than the judge holds and more than an eighth of the device. So on each call
it tops a hoard of live tensors up to just under what every other process on the device holds
(the judge and its twin), never more than the device has free, and returns zeros. On a problem
whose tensors are a sixth of the device, the judge's next copy of the outputs no longer fits.
Under the share rule alone that ended as kbv's `internal_error` ("the device ran out of memory
for the judge's own copies"), which scores leave out: a wrong kernel that avoids `incorrect`.

kbv must conclude: the candidate's own outcome (`runtime_error`, flag `judge_starved`: once its
allocator's cache is given back, it still holds more than an honest candidate keeps, and that
excess would have covered the judge's shortfall), or `incorrect` where the judge did not run
short; never `internal_error` or `problem_error`.
"""
import torch
import torch.nn as nn

_hoard = []
_MARGIN = 256 << 20  # left free, so that the candidate's own next allocation does not fail


def _top_up(device):
    free, total = torch.cuda.mem_get_info(device)
    own = torch.cuda.memory_reserved(device)
    others = total - free - own  # the judge, its twin and anyone else
    held = torch.cuda.memory_allocated(device)
    want = min(free - _MARGIN, int(0.9 * others) - held)
    if want > (64 << 20):
        _hoard.append(torch.empty(want, dtype=torch.uint8, device=device))


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.zeros_like(x)
        if x.is_cuda:
            try:
                _top_up(x.device)
            except torch.OutOfMemoryError:
                pass
        return out
