"""Watch's test helpers: a real training job (torch CPU DataLoaders with real workers) and `python -m
envguard watch` run on it as a real subprocess, with what it reported; and hand-built records for the pure
parts (roles, summary, verdicts, views), each builder taking the fields a test cares about. The fixtures that
use them are in conftest.py."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from envguard.pipeline.costs import Setting
from envguard.watch.records import (
    GpuSample,
    HookStatus,
    HostSample,
    LoaderTotals,
    ProcSample,
    Role,
    Sample,
    WatchRun,
)
from envguard.watch.summary import Figures, Summary

TRAIN = """
import argparse, os, sys, time
import torch
from torch.utils.data import DataLoader, Dataset

p = argparse.ArgumentParser()
p.add_argument("--workers", type=int, default=1)
p.add_argument("--batches", type=int, default=100)
p.add_argument("--batch-size", type=int, default=4)
p.add_argument("--cpu-ms", type=float, default=0.0, help="augmentation CPU per sample")
p.add_argument("--sleep-ms", type=float, default=0.0, help="I/O latency per sample")
p.add_argument("--leak-kb", type=int, default=0, help="memory each sample leaves behind in its worker")
p.add_argument("--step-ms", type=float, default=0.0, help="sleep per step (a GPU step, seen from the host)")
p.add_argument("--compute-ms", type=float, default=0.0, help="CPU per step (a forward/backward on the CPU)")
p.add_argument("--exit-code", type=int, default=0)
p.add_argument("--threads", type=int, default=1, help="the step's intra-op threads")
args = p.parse_args()
torch.set_num_threads(args.threads)


class Images(Dataset):
    def __init__(self):
        self.kept = []

    def __len__(self):
        return 10**6

    def __getitem__(self, i):
        if args.sleep_ms:
            time.sleep(args.sleep_ms / 1000)
        end = time.process_time() + args.cpu_ms / 1000
        x = torch.rand(3, 16, 16)
        while time.process_time() < end:
            x = torch.flip(x, dims=[2]) * 0.999  # an augmentation chain
        if args.leak_kb:
            # a per-sample cache that never stops
            self.kept.append(bytearray(os.urandom(args.leak_kb * 1024)))
        return x, i % 10


model = torch.nn.Linear(3 * 16 * 16, 10)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(Images(), batch_size=args.batch_size, num_workers=args.workers, shuffle=False)
for n, (x, y) in enumerate(loader):
    if n >= args.batches:
        break
    loss = torch.nn.functional.cross_entropy(model(x.flatten(1)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if args.step_ms:
        time.sleep(args.step_ms / 1000)
    end = time.process_time() + args.compute_ms / 1000
    while time.process_time() < end:
        torch.mm(torch.rand(64, 64), torch.rand(64, 64))
print("trained", n, "batches", flush=True)
sys.exit(args.exit_code)
"""


@dataclass
class Watched:
    """What `envguard watch --json -o FILE` left: its exit code, the report, its stdout and stderr."""

    code: int
    report: dict[str, Any]
    stdout: str
    stderr: str

    @property
    def diagnosis(self) -> dict[str, Any]:
        return dict(self.report["diagnosis"])


Watch = Callable[..., Watched]  # the `watch` fixture


def run_envguard(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envguard", *argv], capture_output=True, text=True, timeout=timeout
    )


# --- hand-built records -------------------------------------------------------------------------------------


def proc(pid: int, ppid: int = 0, role: Role = "other", cpu: float = 0.0, **fields: Any) -> ProcSample:
    values: dict[str, Any] = {
        "name": "python",
        "core": None,
        "threads": 1,
        "rss": 100 * 2**20,
        "uss": None,
        "state": "sleeping",
        "read_bytes": None,
        "read_rate": None,
    }
    return ProcSample(pid=pid, ppid=ppid, role=role, cpu=cpu, **{**values, **fields})


def host(cpu: float = 50.0, cores: int = 2, **fields: Any) -> HostSample:
    values: dict[str, Any] = {
        "iowait": 0.0,
        "steal": 0.0,
        "psi_cpu": None,
        "psi_io": None,
        "mem_total": 16 * 2**30,
        "mem_available": 8 * 2**30,
        "swap_used": 0,
        "shm_used": 0,
        "shm_total": 2**30,
    }
    return HostSample(cpu=cpu, per_core=(cpu,) * cores, **{**values, **fields})


def loader(
    batches: int, wait_s: float, step_s: float, workers: int | None = 2, **fields: Any
) -> LoaderTotals:
    values: dict[str, Any] = {
        "pid": 10,
        "rank": None,
        "id": 0,
        "settings": Setting(num_workers=workers, pin_memory=False, batch_size=4, dataset="Images"),
        "epochs": 0,
        "startup_s": 0.5,
        "first_s": 0.5,
    }
    return LoaderTotals(batches=batches, wait_s=wait_s, step_s=step_s, **{**values, **fields})


def gpu(utilization: int = 90, used_by_tree: bool = True) -> GpuSample:
    return GpuSample(0, "NVIDIA A100", used_by_tree, utilization, 2**30, 80 * 2**30, 1e9, 1e6, 1400, 250.0)


def sample(
    t: float,
    procs: tuple[ProcSample, ...] = (),
    loaders: tuple[LoaderTotals, ...] = (),
    gpus: tuple[GpuSample, ...] = (),
    **host_fields: Any,
) -> Sample:
    return Sample(t=t, procs=procs, host=host(**host_fields), gpus=gpus, loaders=loaders)


def run(samples: tuple[Sample, ...], **fields: Any) -> WatchRun:
    values: dict[str, Any] = {
        "command": ("python", "train.py"),
        "pid": 10,
        "interval": 1.0,
        "started": "2025-01-01T00:00:00+00:00",
        "duration": samples[-1].t if samples else 0.0,
        "exit_code": 0,
        "usable_cpus": 2,
        "physical_cpus": 2,
        "hook": HookStatus(state="active"),
        "loaders": samples[-1].loaders if samples else (),
    }
    return WatchRun(samples=samples, **{**values, **fields})


def figures(**fields: Any) -> Figures:
    """A steady window of two workers at 30% CPU on two idle-ish cores, nothing else wrong."""
    values: dict[str, Any] = {
        "window": 10,
        "workers": 2,
        "worker_cpu": 30.0,
        "worker_cores": 0.6,
        "main_cores": 0.3,
        "job_cores": 0.9,
        "busy_cores": 1.0,
        "cores": 2,
        "iowait": 0.0,
        "steal": 0.0,
        "psi_cpu": None,
        "dstate": 0.0,
        "runnable": 0.0,
        "disk_read": 0.0,
        "disk_peak": 0.0,
        "worker_growth": 0.0,
        "worker_growth_s": 0.0,
        "worker_first_uss": 50 * 2**20,
        "shm_peak": 0.1,
        "mem_available_min": 0.5,
        "swap_growth": 0,
        "gpu_util": None,
    }
    return Figures(**{**values, **fields})


def summary(main: LoaderTotals | None = None, **fields: Any) -> Summary:
    """The run as the verdicts read it: `main` is the loader the loop spent its time in (totals from it)."""
    values: dict[str, Any] = {
        "figures": figures(),
        "loader": main,
        "batches": main.batches if main else 0,
        "wait_s": main.wait_s if main else 0.0,
        "loop_s": main.loop_s if main else 0.0,
        "usable_cpus": 2,
        "hook": HookStatus(state="active" if main else "no-loader"),
        "workers_seen": True,
        "gpus_sampled": False,
        "gpu_used": False,
        "gpu_note": "no GPU data: nvidia-ml-py is not installed (pip install nvidia-ml-py)",
    }
    return Summary(**{**values, **fields})
