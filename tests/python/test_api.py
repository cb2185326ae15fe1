"""The Python API (python/kbv) against the real kbv binary, on the CPU.

Run: KBV_BIN=build/bin/kbv python -m pytest tests/python -q (ctest: python.api, label
integration). Every evaluation is correctness-only or a 1 s time budget at the small size.
"""
import importlib.util
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

import kbv

ROOT = Path(__file__).resolve().parents[2]
RELU = ROOT / "examples/problems/level1/19_ReLU.py"
CANDIDATES = ROOT / "examples/candidates"
CPU = dict(device="cpu", protocol="strict")

# A correct ReLU as an RL loop would hand it over: source text, not a file.
RELU_TORCH_SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            return torch.relu(x)
    """)


@pytest.fixture(scope="session", autouse=True)
def kbv_binary():
    try:
        return kbv.find_kbv()
    except kbv.KbvNotFoundError as e:
        pytest.skip(f"no kbv binary: {e}")


def test_correct_candidate_file_on_cpu_with_timing():
    v = kbv.evaluate(RELU, CANDIDATES / "relu_cpp_ext.py", time_budget=1, **CPU)
    assert v.api_seconds is not None and v.api_seconds >= v.wall_seconds > 0
    assert v.outcome == kbv.Outcome.CORRECT, v.summary()
    assert v.correct and v.reason == ""
    assert v.schema == kbv.SCHEMA and v.protocol == "strict"
    assert v.problem.id == 19 and v.problem.name == "ReLU" and v.problem.size == "small"
    assert v.device.kind == "cpu"
    assert v.custom_kernel and v.build.extensions and v.build.extensions[0].requested_name == "my_ext"
    assert not v.correctness.failed and any(d.passed for d in v.correctness.distributions)
    assert v.timing.clock == "cpu_steady_clock"
    assert isinstance(v.timing.primary.median, float) and v.timing.primary.median > 0
    # The headline figure unless the judge read the host as contended (a loaded machine).
    assert v.timing.cpu_wait_share is not None
    assert v.speedup == (None if v.timing.no_figure else v.timing.primary.median)
    assert {s.name for s in v.timing.series} >= {"candidate"}
    assert v.timing.series[0].samples_ms
    assert v.integrity_flags == []
    assert v.raw["outcome"] == "correct" and v.to_dict() == v.raw


def test_incorrect_candidate_is_a_verdict_not_an_exception():
    v = kbv.evaluate(RELU, CANDIDATES / "relu_wrong_cpu.py", timing=False, **CPU)
    assert v.outcome == kbv.Outcome.INCORRECT
    assert not v.correct and v.speedup is None and v.timing is None
    first = v.correctness.failed[0]
    assert first.name == "D1_x1" and first.reason and v.reason.startswith("D1_x1")
    assert first.max_abs_err == pytest.approx(0.1, abs=1e-3)
    assert first.mismatched > 0 and first.numel > 0


def test_hidden_test_file_as_source_text():
    hidden = ROOT / "tests/integration/fixtures/hidden"
    v = kbv.evaluate(hidden / "problems/level1/1_Double.py", hidden / "small_values_only.py", timing=False,
                     hidden_test=kbv.Text((hidden / "hidden_tests/level1/1_hidden.py").read_text()), device="cpu",
                     protocol="verified")  # strict's own outliers would fail it too
    assert v.outcome == kbv.Outcome.INCORRECT, v.summary()
    assert [d.name for d in v.correctness.failed] == ["hidden_2"]
    assert v.problem.hidden_tests is not None and len(v.problem.hidden_tests.sha256) == 64


def test_candidate_and_problem_as_source_strings():
    v = kbv.evaluate(kbv.Text(RELU.read_text()), kbv.Text(RELU_TORCH_SOURCE), timing=False, **CPU)
    assert v.outcome == kbv.Outcome.CORRECT, v.summary()
    assert not v.custom_kernel
    assert "no_custom_kernel" in [f.name for f in v.flags] and v.integrity_flags == []
    # the temporary files are gone once evaluate returns
    assert v.candidate.path.endswith("candidate.py") and not Path(v.candidate.path).exists()
    assert not Path(v.problem.path).exists()


def test_evaluate_many_keeps_order_and_isolates_a_crash():
    pairs = [(RELU, CANDIDATES / "relu_wrong_cpu.py"),
             (RELU, CANDIDATES / "relu_crash_segfault.py"),
             (RELU, kbv.Text(RELU_TORCH_SOURCE)),
             (RELU, CANDIDATES / "does_not_exist.py")]
    verdicts = kbv.evaluate_many(pairs, jobs=2, timing=False, **CPU)
    assert [v.outcome for v in verdicts] == ["incorrect", "crashed", "correct", "internal_error"]
    assert "signal 11" in verdicts[1].reason or "SIGSEGV" in verdicts[1].reason, verdicts[1].reason
    # a usage error is the caller's, not the candidate's: a placeholder that carries the error
    assert isinstance(verdicts[3].error, kbv.KbvUsageError)
    assert all(v.error is None for v in verdicts[:3])
    assert all(v.api_seconds is not None and v.api_seconds > 0 for v in verdicts)


def test_a_group_is_judged_by_one_warm_judge():
    """jobs=1: the group's items are one kbv eval, one judge kept warm across them (its
    interpreter's start-up, the "python" stage, only in the first verdict); each item still has
    its own verdict, in order, and a missing file is that item's placeholder alone."""
    pairs = [(RELU, kbv.Text(RELU_TORCH_SOURCE)),
             (RELU, CANDIDATES / "relu_wrong_cpu.py"),
             (RELU, CANDIDATES / "does_not_exist.py"),
             (RELU, kbv.Text(RELU_TORCH_SOURCE + "# another\n"))]
    # without device turns: a gated judge's start-up is not a "python" stage of its own
    verdicts = kbv.Session(jobs=1, timing=False, env={"KBV_DEVICE_LOCK": "0"}, **CPU).evaluate_many(pairs)
    assert [v.outcome for v in verdicts] == ["correct", "incorrect", "internal_error", "correct"], \
        [v.summary() for v in verdicts]
    assert isinstance(verdicts[2].error, kbv.KbvUsageError)
    judged = [verdicts[i] for i in (0, 1, 3)]
    assert "python" in judged[0].raw["stage_seconds"]
    assert all("python" not in v.raw["stage_seconds"] for v in judged[1:]), [v.raw["stage_seconds"] for v in judged]
    assert all(v.api_seconds is not None and v.api_seconds > 0 for v in verdicts)


def test_usage_error_raises_with_kbv_output():
    with pytest.raises(kbv.KbvUsageError) as e:
        kbv.evaluate(RELU, CANDIDATES / "does_not_exist.py", **CPU)
    assert e.value.returncode == 2 and "does_not_exist.py" in str(e.value)
    with pytest.raises(kbv.KbvUsageError) as e:
        kbv.evaluate(RELU, CANDIDATES / "relu_wrong_cpu.py", device="cpu", protocol="lenient")
    assert "lenient" in e.value.output


def test_missing_binary_raises(monkeypatch, tmp_path):
    with pytest.raises(kbv.KbvNotFoundError):
        kbv.evaluate(RELU, CANDIDATES / "relu_wrong_cpu.py", kbv_path=tmp_path / "kbv", **CPU)
    monkeypatch.setenv("KBV_BIN", str(tmp_path / "nowhere" / "kbv"))
    with pytest.raises(kbv.KbvNotFoundError, match="KBV_BIN"):
        kbv.evaluate(RELU, CANDIDATES / "relu_wrong_cpu.py", **CPU)
    with pytest.raises(kbv.KbvNotFoundError):  # before any work starts
        kbv.evaluate_many([(RELU, CANDIDATES / "relu_wrong_cpu.py")], **CPU)


def test_kbv_bin_may_name_the_folder(monkeypatch, kbv_binary):
    monkeypatch.setenv("KBV_BIN", str(Path(kbv_binary).parent))
    assert kbv.find_kbv() == str(Path(kbv_binary).resolve())


def _stand_in(tmp_path, body):
    """A stand-in for kbv (for kbv's own failures, which the real one does not produce on
    demand): a Python script that receives kbv eval's arguments."""
    script = tmp_path / "kbv"
    script.write_text(f"#!{sys.executable}\nimport json, sys\nargs = sys.argv[1:]\n" + textwrap.dedent(body))
    script.chmod(0o755)
    return script


def test_internal_error_raises_and_is_a_placeholder_in_a_batch(tmp_path):
    stand_in = _stand_in(tmp_path, """\
        verdict = {"schema": "kbv.verdict/1", "protocol": "strict", "outcome": "internal_error",
                   "reason": "kbv-judge killed by signal 9", "stage": "correctness",
                   "a_field_from_the_future": {"x": 1}}
        json.dump(verdict, open(args[args.index("--json") + 1], "w"))
        """)
    with pytest.raises(kbv.KbvInternalError) as e:
        kbv.evaluate(RELU, CANDIDATES / "relu_wrong_cpu.py", kbv_path=stand_in, **CPU)
    assert e.value.verdict.reason == "kbv-judge killed by signal 9"
    assert e.value.verdict.raw["a_field_from_the_future"] == {"x": 1}
    [v] = kbv.evaluate_many([(RELU, CANDIDATES / "relu_wrong_cpu.py")], kbv_path=stand_in, **CPU)
    assert v.outcome == "internal_error" and isinstance(v.error, kbv.KbvInternalError)


def test_no_verdict_raises_with_kbv_output(tmp_path):
    stand_in = _stand_in(tmp_path, """\
        print("kbv: cannot start kbv-judge", file=sys.stderr)
        sys.exit(1)
        """)
    with pytest.raises(kbv.KbvNoVerdictError, match="cannot start kbv-judge") as e:
        kbv.evaluate(RELU, CANDIDATES / "relu_wrong_cpu.py", kbv_path=stand_in, **CPU)
    assert e.value.returncode == 1


def test_verdict_parsing_keeps_unknown_fields_and_tolerates_missing_parts():
    v = kbv.Verdict.from_dict({"outcome": "correct", "new_top": 1,
                               "timing": {"primary_baseline": "eager_tf32_on", "new_timing": "x",
                                          "speedups": [{"baseline": "eager_tf32_off", "median": 1.5},
                                                       {"baseline": "eager_tf32_on", "median": 1.2}]},
                               "flags": [{"name": "input_mutated", "evidence": "call 0"},
                                         {"name": "degenerate", "evidence": ""}]})
    assert v.correct and v.speedup == 1.2 and v.timing.speedup_vs("eager_tf32_off").median == 1.5
    assert v.raw["new_top"] == 1 and v.timing.raw["new_timing"] == "x"
    assert v.correctness is None and v.memory is None and v.memory_ratio is None
    assert [f.name for f in v.integrity_flags] == ["input_mutated"]
    with pytest.raises(ValueError):
        kbv.Verdict.from_dict({"schema": "kbv.verdict/1"})


def _timed(clock, **timing):
    series = [{"name": "candidate", "samples": 20}, {"name": "eager_tf32_off", "samples": 20}]
    return kbv.Verdict.from_dict({"outcome": "correct", "timing": {
        "clock": clock, "primary_baseline": "eager_tf32_off", "series": series,
        "speedups": [{"baseline": "eager_tf32_off", "median": 9.68, "compare": "UNSURE"}], **timing}})


def test_speedup_is_no_figure_where_kbv_says_so():
    # What kbv's report leaves out of its average, the API does not hand to a reward either.
    assert _timed("cpu_steady_clock", cpu_wait_share=0.04).speedup == 9.68  # an idle host
    contended = _timed("cpu_steady_clock", cpu_wait_share=1.62)
    assert contended.speedup is None and contended.timing.no_figure
    assert contended.timing.primary.median == 9.68  # the measured ratio stays readable
    assert _timed("cpu_steady_clock").speedup is None  # contention that could not be read
    assert _timed("cuda_events").speedup == 9.68  # the GPU's events: no CPU share to read
    assert _timed("cuda_events", floor_samples=10).speedup is None  # half at the timer's floor
    assert _timed("cuda_events", floor_samples=9).speedup == 9.68
    spec = importlib.util.spec_from_file_location("grpo_reward", ROOT / "examples/python/grpo_reward.py")
    grpo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grpo)
    assert grpo.reward(contended) == grpo.reward(_timed("cuda_events", floor_samples=20))
    assert grpo.reward(contended) < grpo.reward(_timed("cpu_steady_clock", cpu_wait_share=0.04))


def test_grpo_reward_example_on_cpu(capsys, tmp_path):
    spec = importlib.util.spec_from_file_location("grpo_reward", ROOT / "examples/python/grpo_reward.py")
    grpo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grpo)
    reply = tmp_path / "reply.md"
    reply.write_text("Here is a faster kernel:\n```python\n" + RELU_TORCH_SOURCE + "```\n")
    refusal = tmp_path / "refusal.txt"
    refusal.write_text("I cannot help with that.")
    group = [str(reply), str(CANDIDATES / "relu_wrong_cpu.py"), str(refusal)]
    assert grpo.main([str(RELU), *group, "--device", "cpu", "--no-timing", "--jobs", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:5] == ["completion", "reward", "adv", "api", "s"]
    rows = [line.split() for line in lines[1:4]]
    assert [row[:2] for row in rows] == [["reply.md", "0.300"], ["relu_wrong_cpu.py", "0.000"],
                                         ["refusal.txt", "0.000"]]
    # api and kbv seconds; a refusal judged by a warm judge (its sandbox started ahead) takes
    # milliseconds of kbv's time, printed as 0.00
    assert all(float(row[3]) > 0 and float(row[4]) >= 0 for row in rows)
    assert float(rows[0][4]) > 0
    assert "compile_error" in lines[3] and lines[4].startswith("3 completions in ")
    assert grpo.advantages([0.3, 0.0, None]) == [pytest.approx(1, rel=1e-4), pytest.approx(-1, rel=1e-4), None]
    assert grpo.reward(kbv.Verdict.from_dict({"outcome": "internal_error"})) is None
    flagged = kbv.Verdict.from_dict({"outcome": "correct", "flags": [{"name": "input_mutated"}]})
    assert grpo.reward(flagged) == 0.0


def test_a_batch_split_over_kbv_processes_hides_every_candidates_folder(tmp_path):
    """examples/attacks/copy_sibling.py in a/ looks for a ModelNew in b/, where the batch's other
    candidate lies. jobs=2 gives each its own kbv process, so a/'s only learns of b/ from the
    --hide-from-candidates arguments the Session passes: the attack finds nothing."""
    base = Path.cwd() / f"kbv-py-batch-folders-{os.getpid()}"  # outside /tmp, which sandboxes replace
    (base / "a").mkdir(parents=True, exist_ok=True)
    (base / "b").mkdir(exist_ok=True)
    for d in (base, base / "a", base / "b"):
        d.chmod(0o777)
    try:
        honest = base / "b" / "candidate.py"
        honest.write_text(RELU_TORCH_SOURCE)
        attacker = base / "a" / "attack.py"
        bundle = ROOT / "examples/attacks/bundle.py"
        import subprocess
        subprocess.run([sys.executable, str(bundle), "--set", f"candidates_dir={base / 'b'}",
                        f"{ROOT / 'examples/attacks/copy_sibling.py'}:{attacker}"], check=True)
        verdicts = kbv.evaluate_many([(RELU, kbv.File(attacker)), (RELU, kbv.File(honest))], jobs=2,
                                     timing=False, **CPU)
        assert [v.outcome for v in verdicts] == ["incorrect", "correct"], [v.summary() for v in verdicts]
        assert "TOOK" not in json.dumps(verdicts[0].raw), verdicts[0].raw
        assert "files in" in json.dumps(verdicts[0].raw), "the attack ran and looked"
    finally:
        import shutil
        shutil.rmtree(base, ignore_errors=True)


def test_staging_follows_the_environment_kbv_is_given(tmp_path, monkeypatch):
    """The staging root is where the kbv started with the Session's env finds its cache (which it
    hides from every sandbox), absolute even for a relative KBV_CACHE; the batch's arguments hide
    it and every candidate file's folder."""
    from kbv.evaluate import Staging, hidden_from_candidates, staging_root
    monkeypatch.chdir(tmp_path)
    assert staging_root({"KBV_CACHE": "rel-cache"}) == str(tmp_path / "rel-cache" / "api")
    assert staging_root({"KBV_CACHE": "", "HOME": str(tmp_path / "home")}) == str(tmp_path / "home" / ".cache" / "kbv" / "api")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "c.py").write_text("")
    staging = Staging({"KBV_CACHE": str(tmp_path / "cache")})
    try:
        args = hidden_from_candidates(staging, [kbv.File(tmp_path / "x" / "c.py"), kbv.Text("x = 1")])
        assert args == ("--hide-from-candidates", str(tmp_path / "cache" / "api"),
                        "--hide-from-candidates", str(tmp_path / "x")), args
    finally:
        staging.close()
