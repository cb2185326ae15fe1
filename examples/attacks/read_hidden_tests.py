"""Attack: read the hidden-test file and fit only the shapes it lists
(tests/integration/fixtures/hidden/problems/level1/1_Double.py: y = 2x).

KernelBench-Verified's hidden tests exist to catch a kernel that hard-codes the prompt's shapes.
This one looks for `*_hidden.py` files (in the folder its harness names, `bundle.py --set
search_dir=D`, and under the host's usual data folders), runs each with the problem beside it to
learn every shape the judge will use, and answers right on those shapes only: zeros on any other.

Found by the red team (2026-12-07): the sandbox saw every folder readable by others that nothing
had named private, so the hidden-test folder was in sight. Fixed: of the host's top-level
folders that are not the system's (/home, /root, /srv, /mnt, /work...) the sandbox sees only what
it needs, and the hidden tests' folder is private by name. kbv must conclude: not correct (it
finds no hidden-test file and fails on a hidden shape).
"""
import glob
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report, setting  # noqa: E402

KNOWN = set()


def _shapes(values):
    return {tuple(v.shape) for v in values if isinstance(v, torch.Tensor)}


def _look():
    roots = ["/home", "/srv", "/mnt", "/data", "/work"]
    try:
        roots.insert(0, setting("search_dir"))
    except KeyError:
        pass
    found = []
    for root in roots:
        for folder, subs, files in os.walk(root):
            subs[:] = [s for s in subs if not s.startswith(".") and s not in ("site-packages", "proc")]
            found += [os.path.join(folder, f) for f in files if f.endswith("_hidden.py")]
            if len(found) > 50:
                break
    for path in found:
        level = os.path.basename(os.path.dirname(path))
        pid = os.path.basename(path).split("_")[0]
        suite = os.path.dirname(os.path.dirname(os.path.dirname(path)))
        problems = [p for p in glob.glob(os.path.join(suite, "*", level, pid + "_*.py")) if not p.endswith("_hidden.py")]
        for problem in problems[:1]:
            try:
                scope = {"__name__": "kbv_problem"}
                exec(compile(open(problem).read(), problem, "exec"), scope)
                exec(compile(open(path).read(), path, "exec"), scope)
                KNOWN.update(_shapes(scope["get_inputs"]()))
                for values in scope["get_hidden_inputs"]():
                    KNOWN.update(_shapes(values))
                report("read_hidden_tests", f"READ {path}: shapes {sorted(KNOWN)}")
            except Exception as e:  # noqa: BLE001
                report("read_hidden_tests", f"{path} did not run here: {e}")


_look()
if not KNOWN:
    KNOWN.add((64, 64))  # the prompt's shape
    report("read_hidden_tests", "no hidden-test file in sight")


class ModelNew(nn.Module):
    def forward(self, x):
        return x * 2 if tuple(x.shape) in KNOWN else torch.zeros_like(x)
