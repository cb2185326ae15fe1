"""How long must the device idle before a sample runs slow, and how much device work before the
sample brings it back to full speed? (session 18; bench/probes/input_rotation.py found the cause:
the first work after the device idled ~20 ms ran 74% slower, and ~0.7 ms of device work before
it removed that.) Times a problem's Model (TF32 on) after a host sleep of S ms and K flushes of
a 256 MiB buffer (~85 us each) then the usual one flush.

  python bench/probes/idle_wake.py PROBLEM.py [--reps 20]
"""
import argparse, statistics, time
import torch

from probe_problem import cuda_inputs, load

ap = argparse.ArgumentParser(); ap.add_argument("problem"); ap.add_argument("--reps", type=int, default=20)
a = ap.parse_args()
p = load(a.problem)
torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
model = p.Model(*p.get_init_inputs()).cuda()
xs = cuda_inputs(p)
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
with torch.no_grad():
    for _ in range(5): model(*xs)
    torch.cuda.synchronize()
    for sleep_ms in (0, 0.5, 2, 5, 20):
        row = []
        for spin in (0, 1, 2, 4, 8):
            t = []
            for _ in range(a.reps):
                time.sleep(sleep_ms / 1000)
                for _ in range(spin + 1): flush.zero_()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record(); model(*xs); e.record(); e.synchronize(); t.append(s.elapsed_time(e))
            row.append(f"spin {spin}: {statistics.median(t):.4f}")
        print(f"idle {sleep_ms:5.1f} ms | " + " | ".join(row), flush=True)
