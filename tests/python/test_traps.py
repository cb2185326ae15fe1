"""Reward traps of the Python API (issue 36), each against the real kbv binary on the CPU:
refusing to answer must score as a failure, a fenced reply must be read, a missing GPU must be
an error, and the default device must work where there is no GPU.

Run: KBV_BIN=build/bin/kbv python -m pytest tests/python/test_traps.py (ctest: python.traps).
"""
import os
import sys
import textwrap
from pathlib import Path

import pytest

import kbv

ROOT = Path(__file__).resolve().parents[2]
RELU = ROOT / "examples/problems/level1/19_ReLU.py"
CANDIDATES = ROOT / "examples/candidates"
FAST = dict(protocol="standard", timing=False)  # correctness only: each call a few seconds

RELU_SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            return torch.relu(x)
    """)


def _gpu_visible() -> bool:
    if os.environ.get("CUDA_VISIBLE_DEVICES") in ("", "-1"):
        return False
    return Path("/dev/nvidia0").exists()


@pytest.fixture(scope="module", autouse=True)
def kbv_binary():
    try:
        return kbv.find_kbv()
    except kbv.KbvNotFoundError as e:
        pytest.skip(f"no kbv binary: {e}")


# Replies a policy may give instead of code. Each must be the candidate's compile_error: a verdict
# that scores zero, not an exception the reward loop catches, nor an internal_error it drops.
REFUSALS = {
    "empty": "",
    "whitespace": "  \n\t\n",
    "one_line": "I cannot help with that.",
    "unparsable": "def forward(self, x:\n    return",
    "cut_at_token_limit": "Sure:\n```python\nimport torch\nclass ModelNew(torch.nn.Module):\n    def forward(",
    "no_model_new": "```python\nimport torch\n```\n",
}


def test_a_refusal_is_the_candidates_compile_error():
    names = sorted(REFUSALS)
    verdicts = kbv.evaluate_many([(RELU, kbv.Completion(REFUSALS[n])) for n in names], device="cpu", jobs=2, **FAST)
    for name, v in zip(names, verdicts):
        assert v.outcome == kbv.Outcome.COMPILE_ERROR, (name, v.summary())
        assert not v.correct and v.error is None and v.reason, name


def test_a_one_line_reply_through_evaluate_is_a_verdict_not_a_usage_error():
    v = kbv.evaluate(RELU, kbv.Completion(REFUSALS["one_line"]), device="cpu", **FAST)
    assert v.outcome == kbv.Outcome.COMPILE_ERROR, v.summary()


def test_refusals_in_a_batch_are_compile_errors_not_internal_errors():
    replies = [REFUSALS["empty"], REFUSALS["one_line"], "```python\n" + RELU_SOURCE + "```\n"]
    with kbv.Session(device="cpu", **FAST) as session:
        verdicts = session.evaluate_completions(RELU, replies)
    assert [v.outcome for v in verdicts] == ["compile_error", "compile_error", "correct"], \
        [v.summary() for v in verdicts]
    assert all(v.error is None for v in verdicts)


def test_empty_text_is_a_compile_error_too():
    v = kbv.evaluate(RELU, kbv.Text(""), device="cpu", **FAST)
    assert v.outcome == kbv.Outcome.COMPILE_ERROR, v.summary()


def test_a_fenced_reply_is_extracted_by_the_api():
    reply = "Here is a faster kernel:\n\n```python\n" + RELU_SOURCE + "```\n\nIt fuses nothing."
    v = kbv.evaluate(RELU, kbv.Completion(reply), device="cpu", **FAST)
    assert v.outcome == kbv.Outcome.CORRECT, v.summary()
    # evaluated as Text, the same reply is prose around code: not Python
    v = kbv.evaluate(RELU, kbv.Text(reply), device="cpu", **FAST)
    assert v.outcome == kbv.Outcome.COMPILE_ERROR, v.summary()


def test_default_device_is_auto_and_works_without_a_gpu():
    v = kbv.evaluate(RELU, kbv.Text(RELU_SOURCE), **FAST)
    assert v.outcome == kbv.Outcome.CORRECT, v.summary()
    assert v.device.kind == ("cuda" if _gpu_visible() else "cpu")


@pytest.mark.skipif(_gpu_visible(), reason="a GPU is visible here: cuda:0 is there")
def test_cuda_asked_for_and_absent_is_an_error_not_skipped():
    with pytest.raises(kbv.KbvDeviceError, match="cuda:0") as e:
        kbv.evaluate(RELU, CANDIDATES / "relu_wrong_cpu.py", device="cuda:0", **FAST)
    assert isinstance(e.value, kbv.KbvUsageError)
    assert e.value.verdict.outcome == "skipped" and e.value.verdict.stage == "device"
    assert "device='auto'" in str(e.value)
    # a batch stops: every item would fail the same way
    with pytest.raises(kbv.KbvDeviceError):
        kbv.evaluate_many([(RELU, kbv.Text(RELU_SOURCE))] * 2, device="cuda:0", **FAST)


def test_device_error_from_a_stand_in(tmp_path):
    """The same mapping where a GPU is present: kbv's verdict for a device it cannot open."""
    script = tmp_path / "kbv"
    script.write_text(f"#!{sys.executable}\nimport json, sys\nargs = sys.argv[1:]\n" + textwrap.dedent("""\
        verdict = {"schema": "kbv.verdict/1", "outcome": "skipped", "stage": "device",
                   "reason": "device: device 'cuda:7' asked for, but no CUDA device is visible"}
        if "--jsonl" in args:  # several candidates: one line each
            with open(args[args.index("--jsonl") + 1], "w") as f:
                for _ in args[3:args.index("--protocol")]:
                    f.write(json.dumps(verdict) + "\\n")
        else:
            json.dump(verdict, open(args[args.index("--json") + 1], "w"))
        """))
    script.chmod(0o755)
    with pytest.raises(kbv.KbvDeviceError, match="cuda:7"):
        kbv.evaluate(RELU, kbv.Text(RELU_SOURCE), device="cuda:7", kbv_path=script)
    with pytest.raises(kbv.KbvDeviceError):
        kbv.Session(device="cuda:7", kbv_path=script).evaluate_completions(RELU, ["a", "b", "c"])


def test_a_repeated_completion_is_not_a_build_race():
    """Two `kbv eval` of one new source at once race on its build folder (one saw PermissionError:
    a correct kernel scored as compile_error); a batch judges a repeated candidate once."""
    source = (CANDIDATES / "relu_cpp_ext.py").read_text() + f"\n# a source no build cache holds: {os.getpid()} {id(object())}\n"
    reply = "```python\n" + source + "```\n"
    verdicts = kbv.Session(device="cpu", jobs=2, **FAST).evaluate_completions(RELU, [reply, reply, reply])
    assert [v.outcome for v in verdicts] == ["correct"] * 3, [v.summary() for v in verdicts]
