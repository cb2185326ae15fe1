#!/usr/bin/env python3
"""Outcomes of a kbv results DB: counts per protocol, then every verdict that is not `correct`
(candidate, protocol, outcome, reason's first line).  python bench/probes/outcomes.py DB"""
import collections
import json
import sqlite3
import sys

con = sqlite3.connect(sys.argv[1])
counts = collections.Counter()
other = []
for (text,) in con.execute("SELECT verdict_json FROM verdicts"):
    v = json.loads(text)
    counts[(v.get("protocol"), v.get("outcome"))] += 1
    if v.get("outcome") != "correct":
        cand = v.get("candidate") or {}
        name = cand.get("path", "?") if isinstance(cand, dict) else str(cand)
        other.append(f"  {name.rsplit('/', 1)[-1]:<42} {v.get('protocol'):<9} {v.get('outcome'):<14} {(v.get('reason') or '').splitlines()[0][:110] if v.get('reason') else ''}")
for (p, o), n in sorted(counts.items()):
    print(f"{p:<9} {o:<14} {n}")
print("\n".join(sorted(other)))
