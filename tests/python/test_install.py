"""`pip install ./python` finds the build's kbv without KBV_BIN (python/setup.py records it).

ctest: python.install. pip builds the wheel in an isolated environment, so it fetches
setuptools from PyPI (as a user's pip does); the test is skipped where PyPI cannot be reached.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kbv

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def kbv_binary():
    try:
        return Path(kbv.find_kbv()).resolve()
    except kbv.KbvNotFoundError as e:
        pytest.skip(f"no kbv binary: {e}")


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("KBV_BIN", "PYTHONPATH", "KBV_BUILD_DIR")}
    env.update(extra)
    return env


def _pip_install(target, env):
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-input", "--target",
                           str(target), str(ROOT / "python")], env=env, capture_output=True, text=True)
    offline = ("satisfies the requirement setuptools" in done.stderr or "NewConnectionError" in done.stderr)
    if done.returncode != 0 and offline:
        pytest.skip("pip cannot reach PyPI for setuptools (build isolation)")
    return done


def test_pip_install_records_the_build_and_find_kbv_uses_it(tmp_path, kbv_binary):
    site = tmp_path / "site"
    # The build folder of the binary under test (bin/kbv's parent), brought up to date (a no-op).
    done = _pip_install(site, _env(KBV_BUILD_DIR=str(kbv_binary.parent.parent)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (site / "kbv" / "_install.json").is_file()
    # The installed copy, outside the checkout, no KBV_BIN, no kbv on PATH.
    probe = subprocess.run([sys.executable, "-c", "import kbv; print(kbv.__file__); print(kbv.find_kbv())"],
                           cwd=tmp_path, capture_output=True, text=True,
                           env=_env(PYTHONPATH=str(site), PATH="/usr/bin:/bin"))
    assert probe.returncode == 0, probe.stderr
    module, found = probe.stdout.split()
    assert module.startswith(str(site)) and found == str(kbv_binary)


def test_pip_install_without_a_build_says_what_to_do(tmp_path):
    done = _pip_install(tmp_path / "site", _env(KBV_BUILD_DIR=str(tmp_path / "no-build"), KBV_NO_BUILD="1"))
    assert done.returncode != 0
    assert "lacks kbv" in done.stdout + done.stderr and "scripts/setup.sh" in done.stdout + done.stderr


def test_a_recorded_binary_that_is_gone_is_named_in_the_error(tmp_path):
    site = tmp_path / "site" / "kbv"
    site.mkdir(parents=True)
    for f in (ROOT / "python" / "kbv").glob("*.py"):
        (site / f.name).write_text(f.read_text())
    (site / "_install.json").write_text('{"kbv": "/nowhere/build/bin/kbv"}')
    probe = subprocess.run([sys.executable, "-c", "import kbv; kbv.find_kbv()"], cwd=tmp_path,
                           capture_output=True, text=True,
                           env=_env(PYTHONPATH=str(site.parent), PATH="/usr/bin:/bin"))
    assert probe.returncode != 0 and "/nowhere/build/bin/kbv" in probe.stderr
