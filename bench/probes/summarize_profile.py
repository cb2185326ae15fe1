#!/usr/bin/env python3
"""Sums the judges' step profiles (KBV_JUDGE_PROFILE=DIR, src/judge/profile.hpp) of one run:
per protocol and step, the seconds per evaluation that ran it and how often it ran per evaluation
(the shared steps, "-" and "done", per judge that evaluated; build-only judges are left out).

    bench/probes/summarize_profile.py DIR
"""
import collections
import pathlib
import sys


def main() -> int:
    folder = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    files = sorted(folder.glob("judge-*.profile"))
    if not files:
        print(f"no judge-*.profile files in {folder}")
        return 1
    seconds = collections.defaultdict(float)
    counts = collections.defaultdict(int)
    judges = collections.defaultdict(set)  # (protocol, step) -> files that ran it
    protocols = collections.defaultdict(set)
    evaluated = 0
    for f in files:
        lines = [line.split("\t") for line in f.read_text().splitlines()]
        # A build-only judge (kbv run's build phase) evaluated nothing: its set-up steps would
        # water down the evaluations' shared ("-") steps.
        if not any(protocol not in ("-", "done") for protocol, *_ in lines):
            continue
        evaluated += 1
        for protocol, step, secs, count in lines:
            key = (protocol, step)
            seconds[key] += float(secs)
            counts[key] += int(count)
            judges[key].add(f.name)
            protocols[protocol].add(f.name)
    print(f"{len(files)} judges, {evaluated} of them evaluated (build-only judges left out)")
    print(f"| protocol | step | s per evaluation | times per evaluation |")
    print(f"|---|---|---:|---:|")
    for key in sorted(seconds, key=lambda k: (k[0], k[1])):
        n = len(protocols[key[0]])
        print(f"| {key[0]} | {key[1]} | {seconds[key] / n:.4f} | {counts[key] / n:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
