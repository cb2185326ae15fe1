"""Attack: talk to the network (examples/problems/level1/19_ReLU.py).

Connects to 127.0.0.1 on the port its harness gave (`bundle.py --set connect_port=N`: the test's
own listener; no other address is ever tried) and sends "kbv-attack-leak". Computes a correct
ReLU, so only the connection is wrong.
kbv must conclude: the listener never hears from it (the sandbox has no network).
"""
import os
import socket
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report, setting  # noqa: E402


def _leak():
    try:
        port = int(setting("connect_port"))
    except (KeyError, ValueError):
        report("network_connect", "no port file")
        return
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"kbv-attack-leak")
        report("network_connect", f"CONNECTED to 127.0.0.1:{port}")
    except OSError as e:
        report("network_connect", f"connect refused: {e}")


_leak()


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
