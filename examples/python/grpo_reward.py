#!/usr/bin/env python3
"""A GRPO-style reward for kernel generation, computed with kbv.

A group of completions for one problem (what GRPO samples per prompt) goes through one
kbv.Session as a batch (Session.evaluate_completions: each reply's first fenced code block is the
candidate; a reply without one is evaluated whole, so a refusal is a compile_error); each verdict
becomes a reward:

- 0 when the candidate does not build, is wrong, crashes or hangs (any outcome but ``correct``),
  including an empty reply or a refusal;
- for a correct one, ``base`` plus ``speed_weight * log(speedup)`` (speedup against the
  protocol's eager baseline, clipped to [1/max_speedup, max_speedup]), never below
  ``min_correct`` so a slow correct kernel still beats a wrong one; ``base`` alone where kbv
  says the speedup is no figure (``verdict.speedup`` is None: the timer's floor, a contended CPU);
- minus ``flag_penalty`` per integrity flag (strict protocol: input_mutated,
  unsynchronized_work, implausible_speed, ...), floored at 0: with the default penalty any flag
  takes the whole reward, so gaming the timer never pays;
- None when kbv could not evaluate the item (``internal_error``): kbv's fault, not the model's;
  leave it out of the group (or evaluate it again).

Then the group-relative advantages (r - mean) / std, as GRPO uses them, and the seconds each
completion took (the API's wall clock, kbv's own, and kbv's build / correctness / timing stages).

Run with the shipped examples (device auto: the GPU when there is one, else the CPU at the small
size with CPU timings):

    python examples/python/grpo_reward.py
    python examples/python/grpo_reward.py --device cuda:0 PROBLEM.py KERNEL.py REPLY.md ...

A ``.py`` file is a candidate kernel as it is; any other file is an LLM's reply (its first fenced
code block is evaluated).
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

ROOT = Path(__file__).resolve().parents[2]
try:
    import kbv
except ImportError:  # not installed (pip install ./python): use the source tree's package
    sys.path.insert(0, str(ROOT / "python"))
    import kbv
EXAMPLE_PROBLEM = ROOT / "examples/problems/level1/19_ReLU.py"
# One group of "completions" for 19_ReLU: correct, wrong, a reward hack, a build failure, a crash,
# and a refusal (an empty reply).
EXAMPLE_GROUP = ["relu_cpp_ext.py", "relu_wrong_cpu.py", "relu_shape_shortcut.py",
                 "relu_compile_error.py", "relu_crash_segfault.py"]


def reward(verdict: kbv.Verdict, *, base: float = 0.3, speed_weight: float = 0.5,
           max_speedup: float = 10.0, min_correct: float = 0.05,
           flag_penalty: float = 1.0) -> Optional[float]:
    """The reward of one verdict (see the module docstring); None for kbv's own failures."""
    if verdict.outcome == kbv.Outcome.INTERNAL_ERROR:
        return None
    if not verdict.correct:
        return 0.0
    r = base
    if verdict.speedup is not None and verdict.speedup > 0:
        r += speed_weight * max(-math.log(max_speedup), min(math.log(verdict.speedup), math.log(max_speedup)))
    r = max(r, min_correct)
    return max(0.0, r - flag_penalty * len(verdict.integrity_flags))


def group_rewards(session: kbv.Session, problem: Union[str, Path],
                  completions: Sequence[Union[str, kbv.Source]]) -> Tuple[List[Optional[float]], List[kbv.Verdict]]:
    """Rewards (and the verdicts) for a group of completions of one problem, in order. A ``str``
    is an LLM's reply; kbv.File / kbv.Text / a Path are taken as they are."""
    verdicts = session.evaluate_completions(problem, completions)
    return [reward(v) for v in verdicts], verdicts


def advantages(rewards: Sequence[Optional[float]]) -> List[Optional[float]]:
    """GRPO's group-relative advantages over the rewards that are not None."""
    scored = [r for r in rewards if r is not None]
    if len(scored) < 2:
        return [0.0 if r is not None else None for r in rewards]
    mean, std = statistics.fmean(scored), statistics.pstdev(scored)
    return [None if r is None else (r - mean) / (std + 1e-6) for r in rewards]


def _completion(path: str) -> Union[str, Path]:
    """A .py file is a kernel (a path); any other file holds an LLM's reply (its text)."""
    return Path(path) if path.endswith(".py") else Path(path).read_text(encoding="utf-8")


def _seconds(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}"


def _stages(verdict: kbv.Verdict) -> str:
    """kbv's seconds in its main stages (docs/verdict-schema.md, stage_seconds): python start-up,
    build, correctness, timing."""
    s = verdict.stage_seconds or {}
    short = {"python": "py", "build": "build", "correctness": "check", "timing": "time"}
    return " ".join(f"{short[k]} {s[k]:.2f}" for k in short if k in s)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("problem", nargs="?", default=str(EXAMPLE_PROBLEM))
    parser.add_argument("completions", nargs="*",
                        help="kernels (.py) or LLM replies (any other file); default: a group of examples/candidates and an empty reply")
    parser.add_argument("--device", default="auto", help="auto (default), cuda:N, cuda or cpu")
    parser.add_argument("--protocol", default="strict")
    parser.add_argument("--time-budget", type=float, default=2.0, help="seconds of timing per candidate")
    parser.add_argument("--no-timing", action="store_true", help="correctness only: correct = base reward")
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args(argv)

    if args.completions:
        completions = [_completion(c) for c in args.completions]
        labels = [Path(c).name for c in args.completions]
    else:
        completions = [ROOT / "examples/candidates" / name for name in EXAMPLE_GROUP] + [""]
        labels = EXAMPLE_GROUP + ["(empty reply)"]
    started = time.monotonic()
    with kbv.Session(device=args.device, protocol=args.protocol, timing=not args.no_timing,
                     time_budget=args.time_budget, jobs=args.jobs) as session:
        rewards, verdicts = group_rewards(session, args.problem, completions)
    total = time.monotonic() - started
    print(f"{'completion':28} {'reward':>6} {'adv':>6} {'api s':>6} {'kbv s':>6}  stages (s)  verdict")
    for label, r, a, v in zip(labels, rewards, advantages(rewards), verdicts):
        shown = "-" if r is None else f"{r:.3f}"
        adv = "-" if a is None else f"{a:+.2f}"
        print(f"{label[:28]:28} {shown:>6} {adv:>6} {_seconds(v.api_seconds):>6} {_seconds(v.wall_seconds):>6}"
              f"  {_stages(v)}  {v.summary()[:80]}")
    print(f"{len(verdicts)} completions in {total:.1f} s ({total / max(1, len(verdicts)):.2f} s a completion, "
          f"jobs {args.jobs or 'default'}, device {args.device})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
