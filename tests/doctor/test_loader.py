"""`envguard doctor --loader FILE.py:NAME` (issue 27): doctor asks the input-pipeline model that smoke and
watch use for the user's loader, from a profile of its dataset run in the environment, and gives the same
setting as `smoke --loader` for the same loader and step. Real prefixes, real DataLoader workers, a planted
loader that waits on I/O."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envguard.machine.host import cpu_info
from tests.helpers import REPO, MakePrefix, by_check, envguard, smoke_json

PLANTED = REPO / "tests" / "pipeline_planted.py"
WAITING = '''
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Waiting(Dataset):
    """Each sample waits 8 ms (a network read), then builds a small tensor."""

    def __len__(self):
        return 4096

    def __getitem__(self, index):
        time.sleep(0.008)
        return torch.full((16,), float(index)), index % 10


def make_loader():
    return DataLoader(Waiting(), batch_size=8, shuffle=True, num_workers=0)
'''


@pytest.fixture
def prefix(make_prefix: MakePrefix) -> Path:
    return make_prefix(["python=3.11", "numpy=1.26"])


def doctor_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = envguard("doctor", *argv, "--no-hashes", "--json")
    captured = capsys.readouterr()
    assert captured.out, captured.err
    return code, json.loads(captured.out)


def _workers(fix: str) -> int:
    return int(fix.split("num_workers=")[1].split(",")[0].split(")")[0])


@pytest.mark.slow
def test_doctor_gives_the_setting_smokes_model_gives_the_same_loader(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "train.py"
    spec.write_text(WAITING)
    code, data = doctor_json(capsys, str(prefix), "--loader", f"{spec}:make_loader")
    assert code == 0, by_check(data)
    advice = data["loader"]["advice"]
    assert advice["current"]["num_workers"] == 0
    # loading that waits 8 ms a sample with next to no CPU: workers overlap the waits, well past the cores
    assert advice["setting"]["num_workers"] > 2, advice
    assert advice["gain"] > 2.0, advice
    found = by_check(data)["worker advice (model)"]
    assert _workers(found["fix"]) == advice["setting"]["num_workers"]
    # the human view of another run: its own profile, whose count a busy machine may move (issue 45)
    human = " ".join(envguard_human(prefix, spec, capsys).split())
    assert re.search(r"train\.py:make_loader: DataLoader\(num_workers=\d+,", human), human

    code, smoked = smoke_json(capsys, str(prefix), "--budget", "25", "--loader", f"{spec}:make_loader")
    assert _workers(by_check(smoked)["worker advice (model)"]["fix"]) == advice["setting"]["num_workers"]


def envguard_human(prefix: Path, spec: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """doctor's human output up to its checklist (the headline and the loader's setting)."""
    envguard("doctor", str(prefix), "--no-hashes", "--loader", f"{spec}:make_loader")
    return capsys.readouterr().out.split("Checklist")[0]


@pytest.mark.slow
def test_a_step_that_keeps_the_cores_busy_leaves_the_loading_in_the_main_process(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The imagenet shape: a CPU step using both cores beside loading that computes; with watch's figures
    doctor keeps the loading in the main process, as watch does (the loading would only move into the
    step)."""
    spec = tmp_path / "train.py"
    spec.write_text(WAITING.replace("time.sleep(0.008)", "sum(i * i for i in range(20000))"))
    code, data = doctor_json(
        capsys,
        str(prefix),
        *("--loader", f"{spec}:make_loader", "--step-ms", "200", "--step-cores", "2"),
        *("--step-threads", "1"),  # its threads fit whatever else runs (the thread advice is tested below)
    )
    advice = data["loader"]["advice"]
    assert code == 0 and advice["setting"]["num_workers"] == 0 and advice["competes"], advice


@pytest.mark.slow
def test_a_step_running_more_threads_than_the_cores_gets_the_thread_advice_not_a_worker_count(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CPU step whose intra-op threads (--step-threads, as watch reports them) outnumber the usable cores:
    doctor and smoke say torch.set_num_threads(K) first, as watch does, and no num_workers from a step that
    waits on itself."""
    usable = cpu_info().usable
    spec = tmp_path / "train.py"
    spec.write_text(WAITING)
    step = ("--step-ms", "20", "--step-cores", f"{usable - 0.1:g}", "--step-threads", str(usable + 2))
    code, data = doctor_json(capsys, str(prefix), "--loader", f"{spec}:make_loader", *step)
    threads = data["loader"]["threads"]
    assert code == 0 and data["loader"]["advice"] is None, data["loader"]
    assert threads["now"] == usable + 2 and 1 <= threads["advised"] <= usable, threads
    found = by_check(data)["intra-op threads"]
    assert found["status"] == "WARN" and f"torch.set_num_threads({threads['advised']})" in found["fix"]
    assert "worker advice (model)" not in by_check(data)
    envguard("doctor", str(prefix), "--no-hashes", "--loader", f"{spec}:make_loader", *step)
    line = " ".join(capsys.readouterr().out.split("Checklist")[0].split())
    assert f"train.py:make_loader: torch.set_num_threads({threads['advised']}) first" in line, line

    code, smoked = smoke_json(capsys, str(prefix), "--budget", "25", "--loader", f"{spec}:make_loader", *step)
    assert "worker advice (model)" not in by_check(smoked)
    assert f"set_num_threads({threads['advised']})" in by_check(smoked)["intra-op threads"]["fix"]


@pytest.mark.slow
def test_a_busy_process_in_another_session_makes_the_steps_threads_too_many(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bench_pipeline_advice's imagenet beside a busy process: watch, in the job's session, said threads
    first; doctor profiled in a session of its own, where the worker got a core to itself, and said 1
    worker. The cores the machine kept busy meanwhile count: doctor now gives watch's answer. The step runs
    as many threads as there are usable cores (torch's default on this box) and a process spins in a
    session of its own, as another user's job does."""
    usable = cpu_info().usable
    if (os.cpu_count() or 1) > usable:
        pytest.skip("the host has cores beyond the usable ones: one busy process need not take the job's")
    spec = tmp_path / "train.py"
    spec.write_text(WAITING)  # a loader that sleeps: the spinner gets its core whatever the worker does
    step = ("--step-ms", "11", "--step-cores", f"{usable - 0.1:g}", "--step-threads", str(usable))
    spinner = subprocess.Popen(
        [sys.executable, "-c", "while True: pass"], start_new_session=True, stdin=subprocess.DEVNULL
    )
    try:
        code, data = doctor_json(capsys, str(prefix), "--loader", f"{spec}:make_loader", *step)
    finally:
        spinner.kill()
        spinner.wait()
    assert code == 0 and data["loader"]["advice"] is None, data["loader"]
    assert data["loader"]["threads"]["advised"] < usable, data["loader"]["threads"]
    assert "other runnable processes" in by_check(data)["intra-op threads"]["evidence"]


@pytest.mark.parametrize("step", [("--step-ms", "200"), ("--step-threads", "2")])
def test_step_figures_without_a_loader_are_one_line_exit_2(
    prefix: Path, capsys: pytest.CaptureFixture[str], step: tuple[str, str]
) -> None:
    code = envguard("doctor", str(prefix), *step)
    err = capsys.readouterr().err
    assert code == 2 and "--loader FILE.py:NAME" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
def test_a_loader_that_raises_is_one_line_exit_2(prefix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = envguard("doctor", str(prefix), "--no-hashes", "--loader", f"{PLANTED}:raising_loader")
    err = capsys.readouterr().err
    assert code == 2, err
    assert "pipeline_planted.py:raising_loader raised FileNotFoundError" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
