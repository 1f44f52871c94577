"""--apply-and-measure inside a real job (hook/_envguard_apply.py under the hook): the override reaches the
dominant loader's DataLoader call however its arguments were written, the thread count is set, the slice stops
itself at its bound with its workers gone, and a value it cannot use is reported, never raised."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil

from envguard.watch.job import DIR_ENV, HOOK_DIR
from envguard.watch.slices import APPLY_ENV
from envguard.watch.streams import StreamReader

# two loaders: `Images` (positional arguments, the one the loop spends its time in) and `Labels`
JOB = """
import os, sys, time, torch
from torch.utils.data import DataLoader, Dataset

class Images(Dataset):
    def __len__(self):
        return 10**6
    def __getitem__(self, i):
        time.sleep(0.005)
        return torch.zeros(4)

class Labels(Dataset):
    def __len__(self):
        return 8
    def __getitem__(self, i):
        return i

torch.set_num_threads(2)
labels = DataLoader(Labels(), 4, False, None, None, 0)
print("LABELS", labels.num_workers, flush=True)
images = DataLoader(Images(), 4, False, None, None, 0)
for n, batch in enumerate(images):
    if n >= int(sys.argv[1]):
        break
print("MAIN", os.getpid(), "RAN", n, "THREADS", torch.get_num_threads(), flush=True)
"""

ADVISED = {"num_workers": 2, "prefetch_factor": 4, "persistent_workers": True, "pin_memory": False}


def _slice(tmp_path: Path, apply: str, batches: int) -> tuple[subprocess.CompletedProcess[str], StreamReader]:
    script = tmp_path / "job.py"
    script.write_text(JOB)
    folder = tmp_path / "streams"
    folder.mkdir()
    env = dict(os.environ, PYTHONPATH=str(HOOK_DIR), **{DIR_ENV: str(folder), APPLY_ENV: apply})
    done = subprocess.run(
        [sys.executable, str(script), str(batches)], capture_output=True, text=True, env=env, timeout=120
    )
    reader = StreamReader(folder)
    reader.poll()
    return done, reader


def test_the_override_reaches_the_dominant_loader_and_the_slice_stops_with_its_workers_gone(
    tmp_path: Path,
) -> None:
    apply = json.dumps({"dataset": "Images", "settings": ADVISED, "threads": 1, "batches": 30})
    done, reader = _slice(tmp_path, apply, batches=10**6)
    assert done.returncode == 0, done.stderr
    assert "LABELS 0" in done.stdout  # the other loader keeps its own setting
    assert "RAN" not in done.stdout  # stopped inside the loop, at its bound
    (loader,) = [lt for lt in reader.loaders() if lt.settings.dataset == "Images"]
    s = loader.settings
    assert (s.num_workers, s.prefetch_factor, s.persistent_workers, s.threads) == (2, 4, True, 1)
    assert loader.batches == 30
    (report,) = reader.applied().values()
    assert report.stopped and report.loaders == 1 and report.threads_set == 1 and not report.error
    workers = {f.pid for f in reader.fetches() if f.worker and f.ppid == loader.pid}
    assert len(workers) == 2
    gone = [pid for pid in workers if not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"]
    assert sorted(gone) == sorted(workers)  # the interpreter's exit ended them: no orphan left


def test_a_bad_override_is_reported_and_the_job_runs_as_written(tmp_path: Path) -> None:
    apply = json.dumps({"dataset": "Images", "settings": {"num_workers": "four"}})
    done, reader = _slice(tmp_path, apply, batches=12)
    assert done.returncode == 0, done.stderr
    assert "RAN 12 THREADS 2" in done.stdout and "Traceback" not in done.stderr
    (loader,) = [lt for lt in reader.loaders() if lt.settings.dataset == "Images"]
    assert loader.settings.num_workers == 0
    (report,) = reader.applied().values()
    assert "num_workers='four' is not a valid value; the override is off" in report.error
    assert report.loaders == 0 and not report.stopped
    assert reader.errors == {}  # the DataLoader timing itself stayed on


def test_an_override_that_is_not_json_is_reported(tmp_path: Path) -> None:
    done, reader = _slice(tmp_path, "[[[", batches=5)
    assert done.returncode == 0 and "RAN 5" in done.stdout, done.stderr
    (report,) = reader.applied().values()
    assert report.error.startswith(f"{APPLY_ENV}=[[[: ") and report.error.endswith("the override is off")


def test_the_wrapped_dataloader_keeps_its_signature(tmp_path: Path) -> None:
    """Libraries that re-create a loader from `inspect.signature(DataLoader.__init__)` still read it."""
    script = (
        "import inspect, torch.utils.data as d; "
        "print(sorted(inspect.signature(d.DataLoader.__init__).parameters)[:3])"
    )
    folder = tmp_path / "streams"
    folder.mkdir()
    env = dict(os.environ, PYTHONPATH=str(HOOK_DIR), **{DIR_ENV: str(folder), APPLY_ENV: "{}"})
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['batch_sampler', 'batch_size', 'collate_fn']"
