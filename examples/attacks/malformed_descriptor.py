"""Attack: turn a wrong kernel's failure into kbv's `internal_error` with one forged reply (19_ReLU).

The candidate holds the runner's channel (fd 3). In its first forward() it writes, before the
runner's own answer, a `called` for seq 1 whose output descriptor lacks "sizes":
  {"type":"called","seq":1,"status":"ok","outputs":[{"where":"arena","dtype":"float32","offset":0,"strides":[1]}]}
parse_view() (torch_host/shared_tensor.cpp) reads it with d.json().at("sizes"), which throws
nlohmann's out_of_range, not ipc::ProtocolError; call_candidate() only catches ProtocolError
around reader_->view(), Judgement::run() catches Ending/RunnerError/ProtocolError only, so the
exception reaches kbv-judge's main() and the verdict is internal_error ("kbv-judge internal
error: ..."). Same for `completed` with a non-string "error" (completed.value("error", string)
throws type_error before the check on the next line) and for a non-string "status" in timing.
internal_error is "kbv's own fault": aggregates.cpp counts it nowhere (the problem drops out of
the denominator) and `kbv run` re-runs it, forever, with the same result.
Returns zeros (wrong).
Verdict kbv gave: internal_error "kbv-judge internal error: [json.exception.out_of_range.403]
key 'sizes' not found". WORKED (a wrong kernel's failure recorded as kbv's fault).
In `kbv run` (binary under test) that verdict carried no device, so it was filed under a
separate run label '[cpu, default]': the problem left the attacker's run's denominators.
(The working tree now reads these fields through ipc::Fields and maps json exceptions to
protocol_violation: fixed there, not in the binary.)

Found by the red team of the judge/sandbox split (2026-12-01). Fixed: every field of a sandbox message is read through checked accessors; a JSON error while
the sandbox runs is a protocol_violation. kbv must conclude: protocol_violation (or another
outcome of the candidate's), never internal_error.
"""
import json
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *init_inputs):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls == 1:
            forged = {"type": "called", "seq": 1, "status": "ok",
                      "outputs": [{"where": "arena", "dtype": "float32", "offset": 0, "strides": [1]}]}
            os.write(3, json.dumps(forged).encode())
        return torch.zeros_like(x)  # wrong
