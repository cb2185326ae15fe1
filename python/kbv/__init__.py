"""kbv: is an LLM-written GPU kernel correct, really faster than PyTorch, no hungrier for memory?

The Python API of kbv (KernelBench-Verified in C++). It drives the ``kbv`` binary: every
evaluation is one ``kbv eval`` process with the command line's engine and isolation, so a
candidate that crashes or hangs can never take the caller's process down::

    import kbv
    v = kbv.evaluate("19_ReLU.py", completion_source, protocol="strict", device="cuda:0")
    v.outcome, v.correct, v.speedup, v.integrity_flags
    verdicts = kbv.evaluate_many([(problem, c) for c in completions], device=["cuda:0", "cuda:1"])

The binary is found through :func:`find_kbv` (``kbv_path=``, ``$KBV_BIN``, ``PATH``, then the
source tree's ``build/bin/kbv``). The verdict's fields are described in docs/verdict-schema.md.
"""
from .binary import find_kbv
from .errors import KbvError, KbvInternalError, KbvNoVerdictError, KbvNotFoundError, KbvUsageError
from .evaluate import evaluate, evaluate_many
from .verdict import (SCHEMA, BuildResult, Correctness, DeviceInfo, Distribution, ExtensionBuild,
                      FileRef, Flag, Limits, Memory, MemoryUse, NumericsCheck, Outcome,
                      ProblemInfo, Provenance, Series, Speedup, Timing, Verdict)

__version__ = "0.1.0"

__all__ = [
    "evaluate", "evaluate_many", "find_kbv",
    "KbvError", "KbvNotFoundError", "KbvUsageError", "KbvNoVerdictError", "KbvInternalError",
    "Verdict", "Outcome", "Flag", "ProblemInfo", "FileRef", "DeviceInfo", "Provenance",
    "BuildResult", "ExtensionBuild", "Correctness", "Distribution", "NumericsCheck", "Timing",
    "Series", "Speedup", "Memory", "MemoryUse", "Limits", "SCHEMA",
]
