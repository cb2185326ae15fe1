"""Attack: ignore the weights kbv hands over, and dodge the one check that would notice (40_Linear_ReLU).

Model's weights come from a fixed seed (problem_phase.cpp kModelSeed), the same one ModelNew is
constructed under, so a ModelNew that snapshots its own freshly-initialised weights at __init__
(a plain tensor attribute: not in state_dict) and computes with that snapshot is right on
every distribution except reinit_params, which re-initialises Model's parameters and hands them
over again. correctness_phase.cpp skips reinit_params whenever
  weights_copied_ < weights_entries_ || weights_entries_ == 0
and both numbers are the sandbox's own account (weights_loaded.copied/entries). One extra
registered buffer with no Model counterpart makes entries > copied: reinit_params is `skipped`
and the verdict stays correct. (A relay could also just report entries=0.)
The kernel is wrong for any weights but the seeded ones.
Verdict kbv gave: correct (strict), reinit_params skipped "ModelNew's parameters do not all
match Model's by name and shape". WORKED (a kernel that ignores its weights judged correct).
Control: the same file without the kbv_pad buffer is INCORRECT (reinit_params: 166 of 256
elements outside tolerance).

Found by the red team of the judge/sandbox split (2026-12-01). Fixed: reinit_params runs whenever every entry of Model has a same-named, same-shaped entry in
ModelNew, decided from Model's side; extra entries of ModelNew do not matter. kbv must
conclude: incorrect on reinit_params under strict.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # receives Model's weights: unused
        self._w = self.linear.weight.detach().clone()        # the seeded init, frozen
        self._b = self.linear.bias.detach().clone()
        self.register_buffer("kbv_pad", torch.zeros(1))       # no Model counterpart

    def forward(self, x):
        return torch.relu(x @ self._w.t() + self._b)
