#!/usr/bin/env python3
"""The same candidates judged by warm judges and by a judge each: the verdicts must not change.

    python bench/warm_vs_cold.py [--problem P.py] [--device auto] [--protocol strict] FILE|DIR ...

Every candidate file given (a folder: its *.py but those starting with "_") against one problem,
three passes through kbv.Session: an untimed warm pass that builds every extension (so neither
timed pass pays a build), then a timed pass with a judge per candidate (warm=False) and a timed
pass with warm judges (the default). It prints each candidate's outcome and flags in both timed
passes, every difference, and each pass's seconds. Outcome and flags are compared; speedups are
measurements, and are only printed. Exit status 1 when any verdict differs. Record the figures in
bench/RESULTS.md with the date and the machine.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
try:
    import kbv
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))
    import kbv

# Flags that report a measurement, not a check's finding: they may differ between two timings.
_MEASURED_FLAGS = {"implausible_speed"}


def candidates_of(paths):
    out = []
    for p in map(Path, paths):
        out += sorted(q for q in p.glob("*.py") if not q.name.startswith("_")) if p.is_dir() else [p]
    return out


def key(v: kbv.Verdict):
    flags = sorted(f.get("name", "") for f in (v.raw.get("flags") or []) if f.get("name") not in _MEASURED_FLAGS)
    return v.outcome, tuple(flags)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--problem", default=str(ROOT / "examples/problems/level1/19_ReLU.py"))
    parser.add_argument("--device", default="auto")
    parser.add_argument("--protocol", default="strict")
    parser.add_argument("--time-budget", type=float, default=1.0)
    parser.add_argument("--run-timeout", type=float, default=30.0, help="a hanging candidate's limit")
    parser.add_argument("--jobs", type=int, help="runs at once in the timed passes (default: the Session's)")
    parser.add_argument("--build-jobs", type=int, default=8, help="runs at once in the untimed pass that builds")
    args = parser.parse_args(argv)

    files = candidates_of(args.paths)
    pairs = [(Path(args.problem), kbv.File(f)) for f in files]
    common = dict(device=args.device, protocol=args.protocol, run_timeout=args.run_timeout)
    seconds = {}

    def one_pass(name, **options):
        started = time.monotonic()
        verdicts = kbv.Session(**common, **options).evaluate_many(pairs)
        seconds[name] = time.monotonic() - started
        print(f"== {name}: {len(verdicts)} verdicts in {seconds[name]:.1f} s", flush=True)
        return verdicts

    one_pass("builds (untimed, warm)", timing=False, jobs=args.build_jobs)
    cold = one_pass("cold (a judge per candidate)", warm=False, time_budget=args.time_budget, jobs=args.jobs)
    warm = one_pass("warm", time_budget=args.time_budget, jobs=args.jobs)

    differ = 0
    for f, c, w in zip(files, cold, warm):
        same = key(c) == key(w)
        differ += not same
        speed = lambda v: f"{v.speedup:.2f}x" if v.speedup else "-"
        print(f"{'  ' if same else '!!'} {f.name:36} cold {c.outcome:18} {speed(c):>8}  warm {w.outcome:18} {speed(w):>8}"
              + ("" if same else f"   cold flags {key(c)[1]}  warm flags {key(w)[1]}  warm reason: {w.reason[:200]}"))
    n = len(files)
    print(f"{n} candidates: {n - differ} same, {differ} differ; timed seconds per candidate: "
          f"cold {seconds['cold (a judge per candidate)'] / n:.2f}, warm {seconds['warm'] / n:.2f}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
