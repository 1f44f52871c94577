"""The smoke tests' environments (a real prefix with python and numpy: smoke runs torch from the test's own
interpreter when the prefix has none), builders of what the in-environment module prints, and that module
importable as the top-level package `envguard_smoke`, as it imports itself."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from envguard.machine import disk
from envguard.smoke import rates, runner
from envguard.smoke.report import DatasetResult
from tests.helpers import REPO, MakePrefix, smoke_wire

PIPELINE_PLANTED = REPO / "tests" / "pipeline_planted.py"
if str(runner.PACKAGE_PARENT) not in sys.path:  # `from envguard_smoke import ...` in the tests
    sys.path.insert(0, str(runner.PACKAGE_PARENT))


@pytest.fixture
def prefix(make_prefix: MakePrefix) -> Path:
    return make_prefix(["python=3.11", "numpy=1.26"])


@pytest.fixture(scope="session")
def numpy1_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second real environment: a venv that reaches this interpreter's torch through a .pth file but has
    its own NumPy 1.26.4 (pip-installed into its site-packages, found first)."""
    import subprocess
    import sys
    import sysconfig

    env = tmp_path_factory.mktemp("numpy1") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next((env / "lib").glob("python3*/site-packages"))
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), "numpy==1.26.4"],
        capture_output=True,
        text=True,
    )
    if installed.returncode != 0:
        pytest.skip(f"numpy 1.26.4 cannot be installed here: {installed.stderr.strip()[-200:]}")
    (site / "zz_envguard_base.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env


# -- the sweep as the in-environment module prints it, read through wire and analysed by rates


def _staircase(lanes: int, rounds: int, period: float, startup: float = 0.05) -> list[float]:
    """Arrivals of `lanes` workers delivering one batch each per `period`, after `startup`."""
    return [startup + period * (1 + k // lanes) for k in range(lanes * rounds)]


def _sweep_row(
    workers: int, rate: float, *, persistent: bool = False, batch: int = 8, others: float | None = 0.0
) -> dict[str, Any]:
    """A measured row (the module's JSON) of `workers` delivering `rate` samples/s over 7 rounds."""
    lanes = max(workers, 1)
    arrivals = _staircase(lanes, 7, batch * lanes / rate)
    return {
        "workers": workers,
        "pin_memory": False,
        "persistent_workers": persistent,
        "batch_size": batch,
        "batches": len(arrivals),
        "batch_bytes": 4096,
        "arrivals_s": arrivals,
        "waits_s": [0.01] * len(arrivals),
        "epoch2_first_batch_s": 0.2 if workers else None,
        "others_cpu_fraction": others,
    }


def _io_entry(rates: dict[int, float], *, nominal: bool = True, latency: float = 10.0) -> dict[str, Any]:
    """An I/O-bound dataset's entry (the module's JSON): a row per worker count at its rate."""
    entry: dict[str, Any] = {
        "name": "io" if nominal else "user",
        "rows": [_sweep_row(w, r) for w, r in rates.items()],
        "profile": {"wall_ms": latency, "cpu_ms": 0.1, "samples": 16},
    }
    if nominal:
        entry.update(nominal_latency_ms=latency, nominal_cpu_ms=0.0)
    return entry


def _summarize(entry: dict[str, Any], physical: int = 2) -> DatasetResult:
    """An entry as the module prints it, read by wire and analysed by rates (as run_smoke does)."""
    (sweep,) = smoke_wire({"throughput": [entry]}, "test").datasets
    return rates.summarize(rates.claimable(sweep), physical)


@pytest.fixture
def staircase() -> Callable[..., list[float]]:
    return _staircase


@pytest.fixture
def sweep_row() -> Callable[..., dict[str, Any]]:
    return _sweep_row


@pytest.fixture
def io_entry() -> Callable[..., dict[str, Any]]:
    return _io_entry


@pytest.fixture
def summarize() -> Callable[..., DatasetResult]:
    return _summarize


@pytest.fixture(scope="session")
def planted() -> ModuleType:
    """tests/pipeline_planted.py imported by its own name, as the in-environment module imports it (spawn
    workers find its classes so)."""
    sys.path.insert(0, str(PIPELINE_PLANTED.parent))
    import pipeline_planted

    return pipeline_planted


# -- --data folders


def _data_files(folder: Path, count: int = 300, size: int = 20_000, sync: bool = True) -> int:
    """`count` files of incompressible bytes in two class folders; the bytes written."""
    total = 0
    for i in range(count):
        sub = folder / f"class_{i % 2}"
        sub.mkdir(parents=True, exist_ok=True)
        data = os.urandom(size + i)
        (sub / f"{i:04}.bin").write_bytes(data)
        total += len(data)
    if sync:
        os.sync()
    return total


def _jpegs(folder: Path, count: int = 120) -> None:
    image = pytest.importorskip("PIL.Image")
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        image.effect_noise((320, 240), 40 + i % 40).convert("RGB").save(folder / f"{i:04}.jpg", quality=90)
    os.sync()


def _real_disk(path: Path) -> None:
    if disk.mount_of(path)[1] in disk.MEMORY_FS | disk.NETWORK_FS or not hasattr(os, "posix_fadvise"):
        pytest.skip(f"{path} is not on a local disk with posix_fadvise: nothing to read cold")


@pytest.fixture
def data_files() -> Callable[..., int]:
    return _data_files


@pytest.fixture
def jpegs() -> Callable[..., None]:
    return _jpegs


@pytest.fixture
def real_disk() -> Callable[[Path], None]:
    """Skips the test where `path` is not on a local disk with posix_fadvise (nothing to read cold)."""
    return _real_disk
