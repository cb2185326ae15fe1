#!/usr/bin/env python3
"""One line per verdict of the judge/sandbox split run (scripts/gpu_check.sh, step split):
outcome, headline speedup with its CI, the candidate's and the baselines' medians, the hop, gated,
checked calls, flags, and where the time went. Usage: summarize_split.py DB [DB...] SAMPLES"""
import json
import sqlite3
import sys

*dbs, samples_path = sys.argv[1:]
names = {}
for line in open(samples_path):
    run, pid, sid, name = line.split()
    names[(run, int(pid), int(sid))] = name
print("| run | candidate | protocol | outcome | speedup [CI] | cand ms | eager off / on ms | hop ms | gated | checked | flags | reason | stages (s) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for db in dbs:
    try:
        con = sqlite3.connect(db)
        con.execute("SELECT 1 FROM verdicts LIMIT 1")
    except sqlite3.Error as e:
        print(f"| {db} | unreadable: {e} |")
        continue
    cols = [r[1] for r in con.execute("PRAGMA table_info(verdicts)")]
    for row in con.execute("SELECT * FROM verdicts"):
        r = dict(zip(cols, row))
        v = json.loads(r["verdict_json"])
        key = (r.get("run_name") or r.get("run"), r.get("problem_id"), r.get("sample_id"))
        t = v.get("timing") or {}
        series = {s["name"]: s["median_ms"] for s in t.get("series", [])}
        sp = next((s for s in t.get("speedups", []) if s["baseline"] == t.get("primary_baseline")), None)
        speed = f"{sp['median']:.3f} [{sp['ci_low']:.3f}, {sp['ci_high']:.3f}]" if sp else ""
        flags = ",".join(f["name"] for f in v.get("flags", []))
        stages = " ".join(f"{k}={s:.1f}" for k, s in sorted(v.get("stage_seconds", {}).items()) if s >= 0.05)
        print(f"| {key[0]} | {names.get(key, key)} | {v['protocol']} | {v['outcome']} | {speed} | {series.get('candidate', '')} | "
              f"{series.get('eager_tf32_off', '')} / {series.get('eager_tf32_on', '')} | {t.get('hop_ms', '')} | {t.get('gated', '')} | "
              f"{t.get('checked_calls', '')} | {flags} | {v.get('reason', '')[:90]} | {stages} |")
    iso = None
    for (vj,) in con.execute("SELECT verdict_json FROM verdicts LIMIT 1"):
        iso = json.loads(vj).get("isolation")
    print("\nisolation:", json.dumps(iso))
