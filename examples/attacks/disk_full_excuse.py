"""Attack: fail, but blame the host's disk, so the failure is kbv's internal_error (left out of
a score) instead of the candidate's own compile_error.

Its answer is wrong (identity for ReLU), so it never reaches the check: at import it takes the
disk its build-cache entry lies on through a file it unlinks and keeps open (its entry then
counts 0 bytes), and raises ENOSPC ("No space left on device").

Found by the red team (2026-12-07): kbv took a build's ENOSPC for the host's state when it saw
the disk full as the failure was reported, while the sandbox still held the blocks. Fixed: the
judge decides only after the sandbox has ended and its failed entry is emptied, from its own look
at the file system. kbv must conclude: compile_error (the disk has room again), and the disk is
given back.
"""
import errno
import os

import torch.nn as nn

folder = os.environ.get("TORCH_EXTENSIONS_DIR", ".")
path = os.path.join(folder, "pad.bin")
fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
os.unlink(path)
taken, step = 0, 16 << 20
while True:
    try:
        os.posix_fallocate(fd, taken, step)
        taken += step
    except OSError:
        break
HELD = fd  # kept open for as long as the sandbox lives
raise OSError(errno.ENOSPC, f"No space left on device (held {taken >> 20} MiB unlinked)")


class ModelNew(nn.Module):
    def forward(self, x):
        return x
