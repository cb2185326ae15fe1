"""Is a baseline's time a property of the process or of where its tensors lie? (session 18)

bench/corpus-l1 problem 6 (ConvTranspose2d, TF32 off) timed 1.805 ms in some kbv evaluations and
1.92 ms in others, each with a CI of +-0.3%. This probe times a problem's Model in one process
over several placements of its tensors (a pad allocation of a random size moves them), with
fresh inputs of the problem's own distribution, and names the kernels each placement ran.

  python bench/probes/baseline_modes.py PROBLEM.py [--placements 8] [--reps 30] [--tf32 off|on] [--burst 5]

Prints one line per placement: median and spread of the forward's time (CUDA events), the
tensors' addresses modulo 2 MiB, and the kernels (torch.profiler) when they change.
"""
import argparse
import random
import statistics

import torch

from probe_problem import cuda_inputs, load


def kernels(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name[:90] for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("problem")
    ap.add_argument("--placements", type=int, default=8)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--tf32", default="off")
    ap.add_argument("--burst", type=int, default=5)
    a = ap.parse_args()
    tf32 = a.tf32 == "on"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    p = load(a.problem)
    torch.manual_seed(0)
    model = p.Model(*p.get_init_inputs()).cuda()
    rng = random.Random()
    last = None
    pads = []
    for k in range(a.placements):
        pads.append(torch.empty(rng.randrange(1, 64) * (1 << 20) + rng.randrange(0, 1 << 20, 512), dtype=torch.uint8, device="cuda"))
        xs = cuda_inputs(p)
        with torch.no_grad():
            fn = lambda: model(*xs)
            for _ in range(5):
                fn()
            # Back to back, so no sample starts on an idled device (idle_wake.py): the mean of
            # a burst of forwards per sample.
            times = []
            for _ in range(a.reps):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                for _ in range(a.burst):
                    out = fn()
                e.record(); e.synchronize()
                times.append(s.elapsed_time(e) / a.burst)
            ks = kernels(fn)
        addrs = [hex(x.data_ptr() % (2 << 20)) for x in xs if torch.is_tensor(x)] + [hex(out.data_ptr() % (2 << 20))]
        print(f"placement {k}: median {statistics.median(times):.4f} ms, min {min(times):.4f}, max {max(times):.4f}; "
              f"addresses mod 2 MiB {addrs}" + ("" if ks == last else f"; kernels {ks}"), flush=True)
        last = ks
        del xs, out


if __name__ == "__main__":
    main()
