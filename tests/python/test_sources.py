"""What a problem or candidate is (kbv/sources.py): typed, never guessed; code-fence extraction;
grouping a batch by problem. No kbv binary needed (ctest: python.sources, label unit)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kbv
from kbv.sources import as_source, source_key

ROOT = Path(__file__).resolve().parents[2]
CODE = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"


# -- code fences: the rule of kbv generate (src/generate/code_extract.cpp) ----------------------

@pytest.mark.parametrize("reply, code", [
    ("Here it is:\n```python\n" + CODE + "```\nIt is fast.", CODE),
    ("```py\n" + CODE + "```", CODE),
    ("```\n" + CODE + "```\n", CODE),
    ("```cuda\nfirst\n```\nthen\n```python\nsecond\n```\n", "first\n"),  # the first block, any tag
    ("   ```python\n" + CODE + "   ```  \n", CODE),  # up to 3 spaces before a fence; blanks after
    ("```python\r\nx = 1\r\n```\r\n", "x = 1\n"),  # CRLF
    ("```python\n```\n", ""),  # an empty block is empty code (a compile_error), not "no block"
    ("```python\na\n````\nb\n```\n", "a\n````\nb\n"),  # a fence with text after it does not close
])
def test_extract_code_takes_the_first_fenced_block(reply, code):
    assert kbv.extract_code(reply) == code
    c = kbv.Completion(reply)
    assert c.code == code and c.fenced and c.text == reply


@pytest.mark.parametrize("reply", [
    "", "I can't help with that.", CODE,
    "    ```python\nindented four spaces: code, not a fence\n```\n",
    "Sure:\n```python\nimport torch\nclass ModelNew(",  # cut at the token limit: never closed
])
def test_a_reply_without_a_closed_block_is_evaluated_whole(reply):
    assert kbv.extract_code(reply) is None
    c = kbv.Completion(reply)
    assert c.code == reply and not c.fenced


def test_extraction_matches_kbv_generate_on_its_own_cases():
    """The C++ rule's documented cases (src/generate/code_extract.hpp), restated."""
    assert kbv.extract_code("a\n```\nb\n```\nc\n```python\nd\n```\n") == "b\n"
    assert kbv.extract_code("```python\nb") is None


# -- typed sources: no guessing from newlines ---------------------------------------------------

def test_bare_str_candidate_is_a_type_error_with_what_to_write():
    for text in ("", "one line", CODE, "examples/candidates/relu_cpp_ext.py"):
        with pytest.raises(TypeError, match=r"kbv\.Completion.*kbv\.Text.*kbv\.File"):
            as_source(text, "candidate")


def test_types_decide_not_content():
    assert isinstance(as_source(Path("a.py"), "candidate"), kbv.File)
    assert isinstance(as_source("a.py", "problem"), kbv.File)  # a str problem is a path, as on the CLI
    assert isinstance(as_source("a.py", "hidden_test"), kbv.File)
    t = kbv.Text("")
    assert as_source(t, "candidate") is t  # empty text is text, evaluated (a compile_error)
    one_line = kbv.Text("x = 1")
    assert as_source(one_line, "problem") is one_line


def test_a_str_with_a_newline_is_no_path():
    with pytest.raises(ValueError, match=r"kbv\.Text"):
        as_source(CODE, "problem")
    with pytest.raises(ValueError):
        kbv.File("")
    with pytest.raises(TypeError):
        kbv.Text(b"bytes")
    with pytest.raises(TypeError):
        as_source(42, "problem")


def test_str_candidate_raises_before_any_kbv_process(tmp_path):
    marker = tmp_path / "ran"
    stand_in = tmp_path / "kbv"
    stand_in.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    stand_in.chmod(0o755)
    with pytest.raises(TypeError):
        kbv.evaluate("p.py", "completion text", kbv_path=stand_in)
    with pytest.raises(TypeError):
        kbv.evaluate_many([("p.py", kbv.Text(CODE)), ("p.py", "oops")], kbv_path=stand_in)
    assert not marker.exists()


# -- batches group by problem -------------------------------------------------------------------

def test_group_by_problem_keeps_first_appearance_order(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    problems = [as_source(p, "problem") for p in (a, b, str(a), kbv.Text(CODE), b, kbv.Text(CODE))]
    groups = kbv.group_by_problem(problems)
    assert [g.indices for g in groups] == [[0, 2], [1, 4], [3, 5]]
    assert groups[0].key == source_key(kbv.File(a)) and groups[2].key.startswith("text:")


def _recording_stand_in(tmp_path):
    """A stand-in kbv that appends "problem<TAB>candidate source" per candidate (a run of several
    is one kbv eval with --jsonl) and writes a correct verdict for each; what a Session hands to
    kbv, without kbv."""
    log = tmp_path / "calls.log"
    script = tmp_path / "kbv"
    script.write_text(f"""#!{sys.executable}
import json, sys
args = sys.argv[1:]
problem = args[1]
candidates = args[2:next(i for i, a in enumerate(args) if a.startswith("--"))]
verdicts = []
with open({str(log)!r}, "a") as f:
    for candidate in candidates:
        f.write(problem + "\\t" + open(candidate).read().replace("\\n", "|") + "\\n")
        verdict = {{"schema": "kbv.verdict/1", "outcome": "correct", "wall_seconds": 0.01,
                   "device": {{"kind": args[args.index("--device") + 1]}}}}
        verdicts.append(verdict)
if "--jsonl" in args:
    with open(args[args.index("--jsonl") + 1], "w") as out:
        out.writelines(json.dumps(v) + "\\n" for v in verdicts)
else:
    json.dump(verdicts[0], open(args[args.index("--json") + 1], "w"))
""")
    script.chmod(0o755)
    return script, log


def test_session_runs_a_batch_group_by_group_and_stages_each_problem_once(tmp_path):
    stand_in, log = _recording_stand_in(tmp_path)
    p1, p2 = kbv.Text("# problem 1\n"), tmp_path / "p2.py"
    p2.write_text("# problem 2\n")
    pairs = [(p1, kbv.Text("c0")), (p2, kbv.Text("c1")), (p1, kbv.Completion("```\nc2\n```")),
             (p2, kbv.Text("c3"))]
    with kbv.Session(kbv_path=stand_in, timing=False, jobs=1) as session:
        verdicts = session.evaluate_many(pairs)
    calls = [line.split("\t") for line in log.read_text().splitlines()]
    assert [c[1] for c in calls] == ["c0", "c2|", "c1", "c3"]  # p1's items, then p2's
    assert calls[0][0] == calls[1][0] and calls[2][0] == calls[3][0] == str(p2)  # staged once
    assert [v.outcome for v in verdicts] == ["correct"] * 4  # input order
    assert all(v.api_seconds is not None for v in verdicts)
    assert verdicts[0].device.kind == "auto"  # the default device is auto
    with pytest.raises(RuntimeError, match="closed"):
        session.evaluate(p1, kbv.Text("c"))


def test_session_evaluate_completions_takes_str_as_replies(tmp_path):
    stand_in, log = _recording_stand_in(tmp_path)
    session = kbv.Session(kbv_path=stand_in, device="cpu", timing=False)
    verdicts = session.evaluate_completions(kbv.Text("# p\n"), ["", "no code", "```python\nx=1\n```"])
    assert sorted(line.split("\t")[1] for line in log.read_text().splitlines()) == ["", "no code", "x=1|"]
    assert [v.device.kind for v in verdicts] == ["cpu"] * 3


def test_session_spreads_jobs_over_devices(tmp_path):
    stand_in, _ = _recording_stand_in(tmp_path)
    session = kbv.Session(kbv_path=stand_in, device=["cuda:0", "cuda:1"], timing=True)
    verdicts = session.evaluate_many([(kbv.Text("# p\n"), kbv.Text(f"c{i}")) for i in range(6)])
    assert {v.device.kind for v in verdicts} == {"cuda:0", "cuda:1"}
    with pytest.raises(ValueError):
        kbv.Session(kbv_path=stand_in, device=[])


def test_session_finds_kbv_when_made(tmp_path, monkeypatch):
    monkeypatch.setenv("KBV_BIN", str(tmp_path / "none"))
    with pytest.raises(kbv.KbvNotFoundError):
        kbv.Session()


def test_a_repeated_candidate_is_judged_once_per_problem(tmp_path):
    stand_in, log = _recording_stand_in(tmp_path)
    p1, p2 = kbv.Text("# problem 1\n"), kbv.Text("# problem 2\n")
    same = "```python\nx = 1\n```"
    pairs = [(p1, kbv.Completion(same)), (p1, kbv.Text("x = 1\n")), (p2, kbv.Text("x = 1\n")),
             (p1, kbv.Text("y = 2\n"))]
    verdicts = kbv.Session(kbv_path=stand_in, timing=False).evaluate_many(pairs)
    calls = sorted(line.split("\t")[1] for line in log.read_text().splitlines())
    assert calls == ["x = 1|", "x = 1|", "y = 2|"]  # once for p1, once for p2
    assert [v.outcome for v in verdicts] == ["correct"] * 4
    assert verdicts[1] is not verdicts[0] and verdicts[1].raw == verdicts[0].raw


def test_a_repeated_file_is_judged_once_and_keeps_its_own_path(tmp_path):
    stand_in, log = _recording_stand_in(tmp_path)
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("x = 1\n")  # the same code in another file: one build, one judgement
    script = stand_in.read_text().replace('"wall_seconds": 0.01,', '"wall_seconds": 0.01, "candidate": {"path": candidate},')
    stand_in.write_text(script)
    verdicts = kbv.Session(kbv_path=stand_in, timing=False).evaluate_many([(kbv.Text("# p\n"), a), (kbv.Text("# p\n"), b)])
    assert len(log.read_text().splitlines()) == 1
    assert [v.candidate.path for v in verdicts] == [str(a), str(b)]


def test_the_same_code_for_two_problems_runs_one_after_the_other(tmp_path):
    stand_in, log = _recording_stand_in(tmp_path)
    # the stand-in takes 0.3 s and notes when it starts and ends
    script = stand_in.read_text().replace("import json, sys", "import json, sys, time\nt0 = time.time(); time.sleep(0.3)")
    script = script.replace('open(candidate).read().replace("\\n", "|")',
                            'open(candidate).read().replace("\\n", "|") + "\\t%f\\t%f" % (t0, time.time())')
    stand_in.write_text(script)
    pairs = [(kbv.Text(f"# problem {i}\n"), kbv.Text("same = 1\n")) for i in range(3)]
    kbv.Session(kbv_path=stand_in, timing=False, jobs=3).evaluate_many(pairs)
    spans = sorted((float(a), float(b)) for _, _, a, b in (line.split("\t") for line in log.read_text().splitlines()))
    assert len(spans) == 3
    assert all(spans[i][1] <= spans[i + 1][0] for i in range(2)), spans  # never two at once
