"""Attack (GPU only): leave nearly all device memory to the next candidate's evaluation
(examples/problems/level1/19_ReLU.py). Found by the session-16 red team, from the source.

A right ReLU whose output is a view at offset 0 of one allocation as large as the free device
memory (less 6 GiB). The sandbox exports an output's whole allocation and the judge maps it to
read the output; a mapping keeps the memory allocated after the sandbox has gone. Since the
judge hands the device's next turn on when it says `released` (before its own exit), the next
evaluation's sandbox and judge would start on a full device: an honest next candidate could fail
to create its CUDA context (runtime_error) or be skipped.

kbv must conclude: this candidate correct (its outputs are right); the next evaluation on the
device unharmed. The judge lets go of every mapping of the sandbox's memory and of its own
cached memory before it says `released` (Judgement::device_work_done). Not yet run on the GPU.
"""
import torch
import torch.nn as nn

_MARGIN = 6 << 30  # room for the judge's own allocations during this evaluation
_block = None


def _giant():
    global _block
    if _block is None:
        free, _total = torch.cuda.mem_get_info()
        _block = torch.empty(max(free - _MARGIN, 1 << 30), dtype=torch.uint8, device="cuda")
    return _block


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.numel() * x.element_size()
        out = _giant()[:n].view(x.dtype).view(x.shape)  # its data pointer is the allocation's base
        torch.clamp(x, min=0, out=out)
        return out
