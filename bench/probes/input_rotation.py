"""Does a baseline's time depend on which input set a round uses? (session 18)

kbv's timing draws a fresh input set every round and flushes L2 before each sample. On bench/corpus-l1
problem 6 (ConvTranspose2d) the eager baselines' samples then spread widely inside one evaluation
(TF32 on: 0.27-0.95 ms, quartiles 0.36-0.56) and their medians differ between evaluations by up to
15%, at a constant 1980 MHz SM clock. This times the problem's Model in six ways, L2 flushed
before every sample in each:
  same:   one input set for every sample;
  pool:   a different set each sample, all drawn before the first (as a pool rotated through);
  fresh:  a set drawn right before each sample;
  idle:   one set, the host asleep 20 ms before each sample (the device idle, no draw);
  idle+spin, fresh+spin: as idle and fresh, with ~0.7 ms of device work (8 more flushes) before
          the flush that precedes the sample.

  python bench/probes/input_rotation.py PROBLEM.py [--reps 40] [--rounds 2] [--tf32 on|off]
"""
import argparse
import statistics
import time

import torch

from probe_problem import cuda_inputs, load


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("problem")
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--tf32", default="on")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = a.tf32 == "on"
    p = load(a.problem)
    model = p.Model(*p.get_init_inputs()).cuda()
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    draw = lambda: cuda_inputs(p)

    def sample(xs, spin=0):
        for _ in range(spin):
            flush.zero_()
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); model(*xs); e.record(); e.synchronize()
        return s.elapsed_time(e)

    with torch.no_grad():
        one = draw()
        for _ in range(5):
            sample(one)
        pool = [draw() for _ in range(a.reps)]
        nap = lambda: time.sleep(0.02) or one
        modes = {"same": (lambda k: one, 0), "pool": (lambda k: pool[k], 0), "fresh": (lambda k: draw(), 0),
                 "idle": (lambda k: nap(), 0), "idle+spin": (lambda k: nap(), 8), "fresh+spin": (lambda k: draw(), 8)}
        for rnd in range(a.rounds):
            for name, (pick, spin) in modes.items():
                t = sorted(sample(pick(k), spin) for k in range(a.reps))
                q = statistics.quantiles(t, n=4)
                print(f"round {rnd} {name:10s}: median {statistics.median(t):.4f} ms, quartiles {q[0]:.4f}-{q[2]:.4f}, "
                      f"min {t[0]:.4f}, max {t[-1]:.4f}", flush=True)


if __name__ == "__main__":
    main()
