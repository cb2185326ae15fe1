"""Attack: starve the judge of device memory while holding less than the judge itself (GPU, a
problem whose tensors are a large part of the device: tests/gpu/test_judge_evidence_gpu.cpp
makes one of an eighth of the device).

The candidate knows the share rule: the judge blames it for an out-of-memory only when its
processes hold more than the judge holds and more than an eighth of the device. So on each call
it tops a hoard up to just under what every other process on the device holds (the judge and its
twin), never more than the device has free, and returns zeros. On a problem whose tensors are an
eighth of the device, the judge's next copy of the outputs no longer fits. Under the share rule
alone that ended as kbv's `internal_error` ("the device ran out of memory for the judge's own
copies"), which scores leave out: a wrong kernel that avoids `incorrect`.

MODE picks where the hoard lives (the red team's variants, each counted by the driver alike):
  "live":   tensors kept in a list;
  "cache":  allocated and dropped, so the blocks stay in the allocator's cache;
  "output": behind the output, a small view of a huge tensor kept alive as the call's result.

kbv must conclude: the candidate's own outcome (`runtime_error`, flag `judge_starved`: when the
judge's allocation failed the sandbox held more than an honest candidate holds, by more than the
judge lacked), or `incorrect` where the judge did not run short; never `internal_error` or
`problem_error`.
"""
import torch
import torch.nn as nn

MODE = "live"
_hoard = []
_MARGIN = 256 << 20  # left free, so that the candidate's own next allocation does not fail


def _hoard_size(device, out_bytes):
    free, total = torch.cuda.mem_get_info(device)
    own = torch.cuda.memory_reserved(device)
    others = total - free - own  # the judge, its twin and anyone else
    return min(free - _MARGIN - out_bytes, int(0.9 * others) - own - out_bytes)


class ModelNew(nn.Module):
    def forward(self, x):
        if not x.is_cuda:
            return torch.zeros_like(x)
        want = _hoard_size(x.device, x.numel() * x.element_size())
        try:
            if MODE == "output" and want > 0:
                big = torch.zeros(x.numel() + want // x.element_size(), dtype=x.dtype, device=x.device)
                return big[: x.numel()].view_as(x)
            if want > (64 << 20):
                block = torch.empty(want, dtype=torch.uint8, device=x.device)
                if MODE == "live":
                    _hoard.append(block)
                del block  # "cache": the allocator keeps the segment
        except torch.OutOfMemoryError:
            pass
        return torch.zeros_like(x)
