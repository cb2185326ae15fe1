"""Attack: make the reference agree with a wrong kernel (examples/problems/level1/19_ReLU.py).

Every route that reached the reference when it lived in the candidate's process, at once:
- the class: every nn.Module subclass named Model gets a forward that returns zeros;
- a global forward hook that replaces any module's output with zeros;
- the problem module's globals: `torch` rebound to a proxy whose relu returns zeros;
- a direct call: Model.forward(instance, x) found through gc, bypassing module hooks.
forward() returns zeros. kbv must conclude: incorrect (the reference lives in the judge).
"""
import gc
import os
import sys
import types

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from _attack_common import report  # noqa: E402


def _zeros_forward(self, *args, **kwargs):
    return torch.zeros_like(args[0])


patched = 0
for cls in nn.Module.__subclasses__():
    if cls.__name__ == "Model":
        cls.forward = _zeros_forward
        patched += 1
torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: torch.zeros_like(o) if torch.is_tensor(o) else o)
for name, mod in list(sys.modules.items()):
    if hasattr(mod, "Model") and hasattr(mod, "get_inputs"):
        proxy = types.SimpleNamespace(**{k: getattr(torch, k) for k in dir(torch) if not k.startswith("__")})
        proxy.relu = lambda x, *a, **k: torch.zeros_like(x)
        mod.torch = proxy
        patched += 1
direct = [o for o in gc.get_objects() if type(o).__name__ == "Model" and isinstance(o, nn.Module)]
report("reference_patched", f"patched {patched} class/module route(s), found {len(direct)} Model instance(s)")


class ModelNew(nn.Module):
    def forward(self, x):
        for m in direct:
            type(m).forward(m, x)  # a direct call: no hook of the harness would see it
        return torch.zeros_like(x)
