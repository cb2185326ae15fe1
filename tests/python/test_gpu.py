"""The Python API on a GPU (ctest: python.gpu, label gpu; scripts/gpu_check.sh runs it on the
GPU machine when pytest is there): device auto picks the GPU, a CUDA device that is not there
raises, and a GRPO-style batch of replies gets its verdicts and seconds per completion."""
import os
from pathlib import Path

import pytest

import kbv

ROOT = Path(__file__).resolve().parents[2]
RELU = ROOT / "examples/problems/level1/19_ReLU.py"
CANDIDATES = ROOT / "examples/candidates"

pytestmark = pytest.mark.skipif(not Path("/dev/nvidia0").exists()
                                or os.environ.get("CUDA_VISIBLE_DEVICES") in ("", "-1"),
                                reason="no GPU visible")


@pytest.fixture(scope="module", autouse=True)
def kbv_binary():
    try:
        return kbv.find_kbv()
    except kbv.KbvNotFoundError as e:
        pytest.skip(f"no kbv binary: {e}")


def test_device_auto_takes_the_gpu():
    v = kbv.evaluate(RELU, CANDIDATES / "relu_cuda.py", protocol="strict", time_budget=1)
    assert v.outcome == kbv.Outcome.CORRECT, v.summary()
    assert v.device.kind == "cuda" and v.custom_kernel and v.integrity_flags == []
    assert isinstance(v.speedup, float) and v.api_seconds >= v.wall_seconds


def test_a_cuda_device_that_is_not_there_raises():
    with pytest.raises(kbv.KbvDeviceError, match="cuda:63"):
        kbv.evaluate(RELU, CANDIDATES / "relu_cuda.py", device="cuda:63", timing=False)


def test_a_batch_of_replies_on_the_gpu():
    kernel = (CANDIDATES / "relu_cuda.py").read_text()
    replies = ["Here:\n```python\n" + kernel + "```\n", "```python\n" + kernel + "```", "",
               "```python\n" + (CANDIDATES / "relu_wrong.py").read_text() + "```\n"]
    with kbv.Session(protocol="strict", time_budget=1) as session:
        verdicts = session.evaluate_completions(RELU, replies)
    assert [v.outcome for v in verdicts] == ["correct", "correct", "compile_error", "incorrect"], \
        [v.summary() for v in verdicts]
    assert verdicts[0].speedup == verdicts[1].speedup  # the same code, judged once
    assert all(v.device.kind == "cuda" and v.api_seconds is not None for v in verdicts)
