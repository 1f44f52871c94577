"""The in-process hook in a real interpreter: it times each loader per epoch, does nothing when envguard is
not listening, survives its folder vanishing, and writes one stream per torchrun rank."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envguard.watch.job import DIR_ENV, HOOK_DIR
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
    env = dict(os.environ, PYTHONPATH=str(HOOK_DIR))
    env[DIR_ENV] = str(folder)
    return subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, env=env, timeout=60
    )


def _streams(tmp_path: Path, source: str) -> tuple[subprocess.CompletedProcess[str], StreamReader]:
    """Run `source` as a script under the hook; its exit (asserted 0) and the streams it left, read."""
    script = tmp_path / "job.py"
    script.write_text(source)
    folder = tmp_path / "streams"
    folder.mkdir()
    done = _hooked(script, folder)
    assert done.returncode == 0, done.stderr
    reader = StreamReader(folder)
    reader.poll()
    return done, reader


def test_hook_times_each_loader_per_epoch(tmp_path: Path) -> None:
    done, reader = _streams(tmp_path, EPOCHS)
    wall = float(done.stdout.split()[-1])
    (loader,) = reader.loaders()
    assert loader.epochs == 2
    assert loader.batches == 2 * (10 - 1)  # each epoch's first batch is start-up, kept apart
    assert loader.settings.num_workers == 0 and loader.settings.batch_size == 4
    assert loader.settings.dataset == "list" and loader.settings.prefetch_factor is None
    assert 2 * 9 * 0.01 <= loader.step_s <= wall  # the 10 ms steps, inside the wall time
    assert 0.0 <= loader.wait_s <= loader.step_s  # in-process list loading is quick next to the step
    env = reader.env()
    assert env is not None and env.torch is not None and env.torch.startswith("2.")
    assert env.executable == sys.executable
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


WORKERS = """
import os, time, torch
from torch.utils.data import DataLoader, Dataset

class Slow(Dataset):
    def __len__(self):
        return 96

    def __getitem__(self, i):
        time.sleep(0.004)  # off the CPU
        end = time.process_time() + 0.001
        while time.process_time() < end:  # on it
            pass
        return torch.zeros(3)

for batch in DataLoader(Slow(), batch_size=4, num_workers=2):
    time.sleep(0.002)
print("MAIN", os.getpid())
"""


def test_workers_report_each_batch_on_the_cpu_clock_and_off_it(tmp_path: Path) -> None:
    done, reader = _streams(tmp_path, WORKERS)
    main = int(done.stdout.split()[-1])
    fetches = reader.fetches()
    assert len(fetches) == 2 and all(f.worker and f.ppid == main for f in fetches), fetches
    assert (
        sum(f.batches for f in fetches) == 24
    )  # every batch, the last ones too (flushed at the worker's exit)
    cpu, off = sum(f.cpu_s for f in fetches), sum(f.off_s or 0.0 for f in fetches)
    assert cpu >= 96 * 0.001 * 0.9
    # the sleeps stand out however busy the machine is: the run-queue wait is not counted as off the CPU
    # (at a load of 6 on 2 cores the kernel's run-queue accounting took ~10% of the sleeps: 0.347 s of 0.384)
    assert 96 * 0.004 * 0.8 <= off <= 96 * 0.004 * 1.5 + 0.1
    (loader,) = reader.loaders()
    assert loader.pid == main and 0 <= loader.wait_cpu_s <= loader.wait_s
    assert 0 <= loader.step_cpu_s <= loader.step_s


def test_torch_warnings_keep_their_own_origin(tmp_path: Path) -> None:
    script = tmp_path / "pinned.py"
    script.write_text(
        "import warnings\nfrom torch.utils.data import DataLoader\nwarnings.simplefilter('always')\n"
        "for b in DataLoader(list(range(8)), batch_size=2, pin_memory=True):\n    pass\n"
    )
    folder = tmp_path / "streams"
    folder.mkdir()
    done = _hooked(script, folder)
    assert done.returncode == 0, done.stderr
    assert "'pin_memory' argument is set as true" in done.stderr
    assert "torch/utils/data/dataloader.py" in done.stderr
    assert "sitecustomize" not in done.stderr


SPINNING_POOL = """
import hashlib, threading, time
from torch.utils.data import DataLoader, Dataset

stop = threading.Event()
def pool():  # another thread of the process busy meanwhile, as a step's intra-op threads spin after it
    block = bytes(1 << 20)
    while not stop.is_set():
        hashlib.sha256(block).digest()  # releases the GIL: CPU on its own thread

class Burn(Dataset):
    def __len__(self):
        return 48

    def __getitem__(self, i):
        block, end = bytes(1 << 16), time.thread_time() + 0.005
        while time.thread_time() < end:  # 5 ms of the loading thread's own CPU, mostly without the GIL
            hashlib.sha256(block).digest()
        return i

threading.Thread(target=pool, daemon=True).start()
for batch in DataLoader(Burn(), batch_size=4, num_workers=0):
    pass
stop.set()
"""


def test_loading_in_the_main_process_counts_the_loading_threads_cpu_not_the_other_threads(
    tmp_path: Path,
) -> None:
    # the loading cost the model needs is what one worker thread would spend; the process clock also counted
    # the step's intra-op threads spinning beside the main thread (imagenet: 11.6 ms read for 5.8 ms)
    if not Path("/proc/thread-self/schedstat").is_file():
        pytest.skip("no /proc/thread-self/schedstat here: the process clock is all there is")
    _, reader = _streams(tmp_path, SPINNING_POOL)
    (fetched,) = reader.fetches()
    per_batch = fetched.cpu_s / fetched.batches
    assert 4 * 0.005 * 0.9 <= per_batch <= 4 * 0.005 * 1.25, per_batch


def test_each_loader_keeps_a_bounded_sample_of_its_per_batch_waits(tmp_path: Path) -> None:
    _done, reader = _streams(tmp_path, EPOCHS)
    (loader,) = reader.loaders()
    assert len(loader.waits) == loader.batches == 18  # every steady batch's wait, under the bound
    assert 0 <= sum(loader.waits) <= loader.wait_s + 1e-3
    assert not list(tmp_path.glob("streams/*.spans"))  # spans only when watch asked for a trace


def test_the_wait_sample_is_uniform_over_the_run_and_bounded() -> None:
    import random

    from envguard.watch.hook import _envguard_spans as spans

    spans._RANDOM = random.Random(7)
    stats: dict[str, object] = {"batches": 0}
    for n in range(20000):
        stats["batches"] = n + 1
        spans.keep_wait(stats, float(n))
    kept = stats["waits"]
    assert isinstance(kept, list) and len(kept) == spans.WAITS_KEPT
    assert 7000 < sum(kept) / len(kept) < 13000  # the whole run's middle, not its first 256 batches
