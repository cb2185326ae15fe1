"""kbv: is an LLM-written GPU kernel correct, really faster than PyTorch, no hungrier for memory?

The Python API of kbv (KernelBench-Verified in C++). It drives the ``kbv`` binary: every
evaluation is one ``kbv eval`` process with the command line's engine and isolation, so a
candidate that crashes or hangs can never take the caller's process down::

    import kbv
    v = kbv.evaluate("19_ReLU.py", kbv.Completion(reply), protocol="strict")   # device="auto"
    v.outcome, v.correct, v.speedup, v.integrity_flags, v.api_seconds
    with kbv.Session(device=["cuda:0", "cuda:1"], time_budget=2) as session:
        verdicts = session.evaluate_completions("19_ReLU.py", replies)   # grouped by problem

What a problem or candidate is, is said by its type, never guessed from its content:
``kbv.File``/``pathlib.Path`` (a file), ``kbv.Text`` (source as given), ``kbv.Completion`` (an LLM's
reply: its first fenced code block). An empty or unparsable candidate is a ``compile_error``
verdict, never an exception.

The binary is found through :func:`find_kbv` (``kbv_path=``, ``$KBV_BIN``, the build that
``pip install`` recorded, ``PATH``, then the source tree's ``build/bin/kbv``). The verdict's
fields are described in docs/verdict-schema.md; the API in docs/python.md.
"""
from .binary import find_kbv
from .errors import (KbvDeviceError, KbvError, KbvInternalError, KbvNoVerdictError, KbvNotFoundError,
                     KbvUsageError)
from .evaluate import EvalOptions, evaluate
from .session import ProblemGroup, Session, evaluate_many, group_by_problem
from .sources import Completion, File, Source, Text, extract_code
from .verdict import (SCHEMA, BuildResult, Correctness, DeviceInfo, Distribution, ExtensionBuild,
                      FileRef, Flag, Limits, Memory, MemoryUse, NumericsCheck, Outcome,
                      ProblemInfo, Provenance, Series, Speedup, Timing, Verdict)

__version__ = "0.1.0"

__all__ = [
    "evaluate", "evaluate_many", "Session", "EvalOptions", "ProblemGroup", "group_by_problem", "find_kbv",
    "File", "Text", "Completion", "Source", "extract_code",
    "KbvError", "KbvNotFoundError", "KbvUsageError", "KbvDeviceError", "KbvNoVerdictError", "KbvInternalError",
    "Verdict", "Outcome", "Flag", "ProblemInfo", "FileRef", "DeviceInfo", "Provenance",
    "BuildResult", "ExtensionBuild", "Correctness", "Distribution", "NumericsCheck", "Timing",
    "Series", "Speedup", "Memory", "MemoryUse", "Limits", "SCHEMA",
]
