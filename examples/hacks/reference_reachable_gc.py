"""Hack: finds the harness's reference Model instance through the garbage collector and calls it.

Problem: examples/problems/level1/19_ReLU.py

On its first call forward scans gc.get_objects() for an nn.Module whose class is named "Model"
(the problem's reference, which the harness constructed and still holds) and from then on
returns ref(x): always exactly the reference's answer, whatever the problem. If none is found
it falls back to torch.relu(x). The found module is kept in a plain list, not as an attribute,
so it does not become a sub-module of ModelNew (no state_dict entries, not moved by .to()).
Pure PyTorch, no extension.

Which strict check catches it, deterministically: reference_reachable. Under strict kbv counts,
through a global module forward pre-hook, every call of a module whose class is defined in the
problem file while the candidate runs; ModelNew.forward calls the reference on D1_x1 already.
(kbv holds the reference object in C++, but any Python object is reachable through gc; what
kbv keeps out of reach are the reference *outputs* and the hidden seeds.)

kbv must conclude:
  - standard: correct (it is the reference); speedup about 1x (it is the reference, plus a
    Python call).
  - verified: correct, about 1x.
  - strict:   incorrect, flag reference_reachable (D1_x1); also no_custom_kernel
    (informational).

CPU-capable: yes (pure PyTorch).

Since the judge/sandbox split: there is no Model in the candidate's process; the hack runs its
fallback (torch.relu): correct, no_custom_kernel (info), ~1x, under every protocol.
"""
import gc

import torch
import torch.nn as nn


def _find_reference():
    for obj in gc.get_objects():
        try:
            if isinstance(obj, nn.Module) and type(obj).__name__ == "Model":
                return obj
        except Exception:  # objects half torn down, proxies...
            continue
    return None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._ref = []  # [reference module] once found; a list so it is not registered

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._ref:
            ref = _find_reference()
            if ref is None:
                return torch.relu(x)
            self._ref.append(ref)
        return self._ref[0](x)
