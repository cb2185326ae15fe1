"""Red team of the device lock (2026-12-06): honest candidates lose their verdict to the Python
API's wall-clock backstop while they wait for the device.

kbv.evaluate() kills its kbv eval after compile_timeout + run_timeout + time_budget + 300 s, counted
from the process's start, and since the device lock (f4593de) that time includes the wait for the
device's turn. Candidates that hang (they hold the device's exclusive lock until their compile
timeout) queued ahead of an honest one push its total past the backstop: it comes back as an
INTERNAL_ERROR placeholder (KbvNoVerdictError), its result lost. Nothing here is malicious: a
hanging completion is an everyday one in RL batches; with the defaults (900 + 600 s) two hangers
ahead of an item (two Sessions on a device, or jobs > 2) are enough.

Scaled down: compile_timeout 60, run_timeout 10 (backstop 370.5 s); HANGERS hangers start first,
the honest torch.relu candidate 3 s later (the order of waiters is not FIFO: whoever polls first
after a release goes next). Result on the 2-core dev machine, 2026-12-06: hangers released every
62.7 s; at 370 s the honest item and two hangers were killed: KbvNoVerdictError "kbv eval did not
finish within 370 s; killed it". Usage (own lock dir, CPU):
  KBV_LOCK_DIR=/tmp/mylocks PYTHONPATH=python python bench/redteam/device_lock_backstop.py build/bin/kbv
"""
import sys
import threading
import time

import kbv

PROBLEM = "examples/problems/level1/19_ReLU.py"
HANG = """import time
time.sleep(100000)
"""
HONEST = """import torch, torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""
HANGERS = 7
opts = dict(device="cpu", protocol="verified", compile_timeout=60, run_timeout=10, time_budget=0.5,
            kbv_path=sys.argv[1])
results = {}


def one(name, src):
    t = time.time()
    try:
        v = kbv.evaluate(PROBLEM, kbv.Text(src), **opts)
        results[name] = (str(v.outcome), round(time.time() - t, 1), (v.reason or "")[:160])
    except kbv.KbvError as e:  # a Session batch turns it into an INTERNAL_ERROR placeholder
        results[name] = (type(e).__name__, round(time.time() - t, 1), str(e)[:160])
    print(name, results[name], flush=True)


threads = [threading.Thread(target=one, args=(f"hang{i}", HANG)) for i in range(HANGERS)]
for th in threads:
    th.start()
time.sleep(3)
honest = threading.Thread(target=one, args=("honest", HONEST))
honest.start()
for th in threads + [honest]:
    th.join()
