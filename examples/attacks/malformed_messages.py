"""Attack: send malformed messages on every channel it holds (examples/problems/level1/19_ReLU.py).

At the first forward() call it writes, to every fd above stderr: `{"event": 1}`, a line of
invalid JSON, 4 MiB of binary, a forged `called` answer with an outputs descriptor pointing
far outside any buffer, and an answer to a call nobody made. Then returns zeros.
kbv must conclude: protocol_violation or incorrect for this candidate alone; the run goes on.
"""
import json
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report, writable_fds  # noqa: E402

PAYLOADS = [
    b'{"event": 1}\n',
    b"{not json\n",
    os.urandom(4 << 20),
    json.dumps({"type": "called", "seq": 1, "status": "ok",
                "outputs": [{"where": "arena", "dtype": "float32", "sizes": [1 << 40], "strides": [1], "offset": 0}]}).encode(),
    json.dumps({"type": "called", "seq": 999999, "status": "ok", "outputs": []}).encode(),
]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.sent = False

    def forward(self, x):
        if not self.sent:
            self.sent = True
            for fd, target in writable_fds():
                for p in PAYLOADS:
                    try:
                        os.write(fd, p)
                    except OSError:
                        pass
                report("malformed_messages", f"wrote to fd {fd} ({target})")
        return torch.zeros_like(x)
