"""Real training scripts (torch CPU DataLoaders with real workers) written to a temp dir, and a runner for
`python -m envguard watch` as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

TRAIN = """
import argparse, os, sys, time
import torch
from torch.utils.data import DataLoader, Dataset

torch.set_num_threads(1)
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
args = p.parse_args()


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
    code: int
    report: dict[str, Any]
    stdout: str
    stderr: str

    @property
    def diagnosis(self) -> dict[str, Any]:
        return dict(self.report["diagnosis"])


def run_envguard(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envguard", *argv], capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture
def train_script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text(TRAIN)
    return path


Watch = Callable[..., Watched]


@pytest.fixture
def watch(tmp_path: Path, train_script: Path) -> Watch:
    """watch(*script_args, interval=0.5, extra=()) runs `envguard watch --json -o FILE -- python train.py
    ARGS`."""

    def run(
        *script_args: str,
        interval: float = 0.5,
        extra: tuple[str, ...] = (),
        command: tuple[str, ...] | None = None,
    ) -> Watched:
        out = tmp_path / "watch.json"
        out.unlink(missing_ok=True)
        cmd = command or (sys.executable, str(train_script), *script_args)
        done = run_envguard(
            "watch", "--interval", str(interval), "--json", "-o", str(out), *extra, "--", *cmd
        )
        report = json.loads(out.read_text()) if out.exists() else {}
        return Watched(done.returncode, report, done.stdout, done.stderr)

    return run
