"""The suite passes with either torch wheel: the CPU build (what this checkout's CI installs) or PyPI's CUDA
build on a machine without a GPU (what `pip install torch==2.13.0` gives on an ordinary Linux box).

Where the suite itself runs on the CPU build, the tests that depend on which build is installed run again in
a venv whose torch says what the CUDA wheel says (tests/cuda_torch.py): the verdicts under test are envguard's
real code on those facts. Where the suite runs on a CUDA build, it is the check itself.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests import cuda_torch
from tests.helpers import REPO

torch = pytest.importorskip("torch")

# the tests whose expectations depend on the torch build (issue 26: they assumed `+cpu`)
BUILD_SENSITIVE = (
    "tests/doctor/test_command.py::test_doctor_on_a_healthy_prefix",
    "tests/smoke/verdicts/test_recording.py::test_a_numpy_change_is_named_as_the_cause",
)


@pytest.fixture(scope="session")
def cuda_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if torch.version.cuda is not None:
        pytest.skip(f"torch {torch.__version__} is a CUDA build already: the suite itself runs on it")
    return cuda_torch.build(tmp_path_factory.mktemp("cuda-torch") / "venv")


def test_the_stand_in_says_what_the_cuda_wheel_says(cuda_wheel: Path) -> None:
    code = (
        "import importlib.metadata as m, torch\n"
        "print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), m.version('torch'))\n"
        "print(any('nvidia-cudnn-cu13' in r for r in m.requires('torch')))\n"
        "print(float(torch.ones(3).sum()))\n"
    )
    done = subprocess.run(
        [str(cuda_wheel), "-c", code], capture_output=True, text=True, env=cuda_torch.env_for(cuda_wheel)
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2.13.0+cu130", "13.0", "False", "2.13.0", "True", "3.0"]


@pytest.mark.slow
def test_the_build_sensitive_tests_pass_with_the_cuda_wheel(cuda_wheel: Path, tmp_path: Path) -> None:
    pytest_argv = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore", f"--basetemp={tmp_path}"]
    done = subprocess.run(
        [str(cuda_wheel), *pytest_argv, *BUILD_SENSITIVE],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=cuda_torch.env_for(cuda_wheel),
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert f"{len(BUILD_SENSITIVE)} passed" in done.stdout
