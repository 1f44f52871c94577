"""The parts of watch on their own: the hook in a real interpreter, the stream reader on real files, the
model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envguard.watch.diagnose import fair_share_speedup
from envguard.watch.model import ProcSample
from envguard.watch.run import HOOK_DIR, label, main_pids
from envguard.watch.streams import StreamReader

EPOCHS = """
import time, torch
from torch.utils.data import DataLoader
start = time.perf_counter()
loader = DataLoader(list(range(40)), batch_size=4, num_workers=0)
for epoch in range(2):
    for batch in loader:
        time.sleep(0.01)
print("WALL", time.perf_counter() - start)
"""


def _hooked(script: Path, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ENVGUARD_WATCH_DIR=str(folder), PYTHONPATH=str(HOOK_DIR))
    return subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_hook_times_each_loader_per_epoch(tmp_path: Path) -> None:
    script = tmp_path / "epochs.py"
    script.write_text(EPOCHS)
    folder = tmp_path / "streams"
    folder.mkdir()
    done = _hooked(script, folder)
    assert done.returncode == 0, done.stderr
    wall = float(done.stdout.split()[-1])
    reader = StreamReader(folder)
    reader.poll()
    (loader,) = reader.loaders()
    assert loader.epochs == 2
    assert loader.batches == 2 * (10 - 1)  # each epoch's first batch is start-up, kept apart
    assert loader.settings["num_workers"] == 0 and loader.settings["batch_size"] == 4
    assert 2 * 9 * 0.01 <= loader.step_s <= wall  # the 10 ms steps, inside the wall time
    assert 0.0 <= loader.wait_s <= loader.step_s  # in-process list loading is quick next to the step
    assert reader.env()["torch"].startswith("2.")
    assert reader.errors == {} and reader.bad_lines == 0


def test_hook_does_nothing_when_envguard_is_gone(tmp_path: Path) -> None:
    script = tmp_path / "epochs.py"
    script.write_text(EPOCHS)
    done = _hooked(script, tmp_path / "missing")
    assert done.returncode == 0 and "WALL" in done.stdout, done.stderr
    assert not (tmp_path / "missing").exists()


def test_hook_survives_its_folder_vanishing_mid_run(tmp_path: Path) -> None:
    folder = tmp_path / "streams"
    folder.mkdir()
    script = tmp_path / "vanish.py"
    script.write_text(
        "import shutil, sys, time\nfrom torch.utils.data import DataLoader\n"
        "for i, b in enumerate(DataLoader(list(range(400)), batch_size=2)):\n"
        "    time.sleep(0.005)\n    if i == 20: shutil.rmtree(sys.argv[1])\nprint('finished', i)\n"
    )
    done = _hooked(script, folder, str(folder))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "finished 199"
    assert done.stderr == ""


def test_stream_reader_waits_for_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "7.jsonl"
    line = json.dumps(
        {
            "pid": 7,
            "rank": 1,
            "env": {},
            "error": "",
            "loaders": [
                {
                    "id": 0,
                    "settings": {"num_workers": 2},
                    "batches": 5,
                    "epochs": 0,
                    "wait_s": 1.0,
                    "step_s": 3.0,
                    "startup_s": 0.2,
                    "first_s": 0.2,
                }
            ],
        }
    )
    path.write_text(line[:30])
    reader = StreamReader(tmp_path)
    reader.poll()
    assert reader.loaders() == ()
    with path.open("a") as handle:
        handle.write(line[30:] + "\nnot json\n")
    reader.poll()
    (loader,) = reader.loaders()
    assert (loader.rank, loader.batches, loader.data_wait_fraction) == (1, 5, 0.25)
    assert reader.bad_lines == 1


def test_fair_share_speedup_stays_within_its_physical_bounds() -> None:
    assert fair_share_speedup(1, 2, 1.0, 0.0, 0.0, 2) == pytest.approx(2.0)
    assert fair_share_speedup(1, 2, 1.0, 0.1, 0.0, 2) == pytest.approx(2 * 2 / 2.1)
    for share in (0.3, 0.5, 0.8, 1.0):
        for others in (0.0, 0.5, 1.5, 3.0):
            value = fair_share_speedup(2, 4, share, 0.05, others, 4)
            assert 1.0 <= value <= 4 / 2 / share + 1e-9  # never above k workers each given a full core


def _proc(pid: int, ppid: int) -> ProcSample:
    return ProcSample(
        pid=pid,
        ppid=ppid,
        name="python",
        role="other",
        cpu=0.0,
        core=None,
        threads=1,
        rss=0,
        uss=None,
        state="sleeping",
        read_bytes=None,
        read_rate=None,
    )


def test_training_processes_found_from_the_tree() -> None:
    # torchrun (1) -> ranks 2, 3 -> their workers 4, 5 and 6
    tree = (_proc(1, 0), _proc(2, 1), _proc(3, 1), _proc(4, 2), _proc(5, 2), _proc(6, 3))
    assert main_pids(tree, set()) == {2, 3}
    assert [p.role for p in label(tree, {2, 3})] == ["other", "main", "main", "worker", "worker", "worker"]
    assert main_pids(tree[:1], set()) == {1}
    assert main_pids(tree, {9}) == {9}


def test_live_panel_fits_80_columns() -> None:
    from rich.console import Console

    from envguard.watch.render import panel
    from envguard.watch.sampler import Sampler

    sampler = Sampler(os.getpid(), 0.1)
    sampler.processes()
    sampler.host()
    from envguard.watch.model import Sample

    sample = Sample(t=1.0, procs=sampler.processes(), host=sampler.host(), gpus=(), loaders=())
    console = Console(width=80, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(
        panel(sample, "input-bound: the loop waits for data 62% of the time; 2 workers at 100% CPU", 3)
    )
    text = console.export_text()
    assert text and max(len(line) for line in text.splitlines()) <= 80
    assert str(os.getpid()) in text and "input-bound" in text


@pytest.mark.skipif(
    shutil.which("torchrun") is None and not (Path(sys.executable).parent / "torchrun").exists(),
    reason="torchrun not installed",
)
def test_torchrun_gives_one_stream_per_rank(tmp_path: Path) -> None:
    script = tmp_path / "ranks.py"
    script.write_text(
        "import time\nfrom torch.utils.data import DataLoader\n"
        "for b in DataLoader(list(range(60)), batch_size=2):\n    time.sleep(0.01)\n"
    )
    out = tmp_path / "w.json"
    torchrun = str(Path(sys.executable).parent / "torchrun")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "envguard",
            "watch",
            "--interval",
            "0.5",
            "--json",
            "-o",
            str(out),
            "--",
            torchrun,
            "--standalone",
            "--nproc-per-node=2",
            str(script),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaders = json.loads(out.read_text())["run"]["loaders"]
    assert sorted(lt["rank"] for lt in loaders) == [0, 1]
    assert len({lt["pid"] for lt in loaders}) == 2
    assert all(lt["batches"] == 29 for lt in loaders)


def test_job_output_is_forwarded_by_line_with_progress_bars_as_they_stand() -> None:
    from envguard.watch.run import _pump

    job = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nprint('start', flush=True)\n"
            "for i in range(3):\n    sys.stdout.write(f'\\r{i}/3'); sys.stdout.flush(); time.sleep(0.2)\n"
            "print()\nprint('end')",
        ],
        stdout=subprocess.PIPE,
    )
    got: list[tuple[str, bool]] = []
    assert job.stdout is not None
    _pump(job.stdout, lambda text, complete: got.append((text, complete))).join(10)
    job.wait()
    complete = [text for text, done in got if done]
    assert complete == ["start", "2/3", "end"]  # the bar's final state is the line a terminal would show
    assert {text for text, done in got if not done} <= {"0/3", "1/3", "2/3"}
