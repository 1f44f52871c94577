"""The live display on stderr while the job runs: its state (the recent samples, a provisional diagnosis over
them) and the panel it shows (rich, 80 columns)."""

from __future__ import annotations

import threading
from typing import Any

from envguard.machine.host import cpu_info
from envguard.output import human_bytes
from envguard.watch.records import HookStatus, Sample, WatchRun
from envguard.watch.run import WatchOptions
from envguard.watch.verdicts import diagnose

WINDOW = 30  # samples the live verdict looks back over
WIDTH = 80


def panel(sample: Sample, headline: str, elapsed: float, status: str = "") -> Any:
    """One screen for rich Live: the verdict on top, then GPU, CPU per process, disk and memory."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    host = sample.host
    lines: list[Any] = [Text(headline, style="bold"), Text(f"{elapsed:.0f} s watched", style="dim")]
    for gpu in sample.gpus:
        lines.append(
            Text(
                f"GPU{gpu.index} {gpu.utilization}% util, {human_bytes(gpu.memory_used)} used, PCIe rx "
                f"{(gpu.pcie_rx or 0) / 1e6:.0f} MB/s, {gpu.power_w or 0:.0f} W"
            )
        )
    cores = " ".join(f"{c:3.0f}" for c in host.per_core[:16])
    lines.append(
        Text(
            f"CPU {host.cpu:.0f}%  iowait {host.iowait or 0:.0f}%  steal {host.steal or 0:.0f}%  "
            f"PSI cpu {host.psi_cpu or 0:.0f}%  cores:{cores}"[:WIDTH]
        )
    )
    disk = sum(host.disk_read.values()) / 1e6
    lines.append(
        Text(
            f"RAM {human_bytes(host.mem_available)} free  swap {human_bytes(host.swap_used)}  "
            f"shm {human_bytes(host.shm_used)}  disk read {disk:.1f} MB/s"
        )
    )
    procs = Table(box=None, pad_edge=False, width=WIDTH)
    for name in ("pid", "role", "CPU%", "core", "state", "RSS", "USS", "read/s"):
        procs.add_column(name, justify="right" if name not in ("role", "state") else "left", no_wrap=True)
    for p in sorted(sample.procs, key=lambda p: (p.role != "main", -p.cpu))[:12]:
        procs.add_row(
            str(p.pid),
            p.role,
            f"{p.cpu:.0f}",
            str(p.core),
            p.state,
            human_bytes(p.rss),
            human_bytes(p.uss),
            human_bytes(p.read_rate),
        )
    lines.append(procs)
    if status.strip():
        lines.append(Text(f"job: {status.strip()}"[:WIDTH], style="dim"))
    return Group(*lines)


class LiveView:
    """Takes each sample (on_sample) and each line of the job's output (the sink) and updates rich Live."""

    def __init__(self, options: WatchOptions, live: Any) -> None:
        self.options = options
        self.live = live
        self.samples: list[Sample] = []
        self.cpus = cpu_info()
        self.lock = threading.Lock()
        self.status = ""

    def headline(self) -> str:
        recent = tuple(self.samples[-WINDOW:])
        run = WatchRun(
            command=self.options.command,
            pid=0,
            interval=self.options.interval,
            started="",
            duration=recent[-1].t,
            exit_code=None,
            usable_cpus=self.cpus.usable,
            physical_cpus=self.cpus.physical,
            hook=HookStatus(state="active" if recent[-1].loaders else "no-loader"),
            samples=recent,
            loaders=recent[-1].loaders,
        )
        return diagnose(run).headline

    def update(self, sample: Sample) -> None:
        self.samples.append(sample)
        with self.lock:
            self.live.update(panel(sample, self.headline(), sample.t, self.status))

    def print(self, text: str, complete: bool) -> None:
        """A complete line of the job's output goes above the panel; a \r progress segment into it."""
        with self.lock:
            if complete:
                self.status = ""
                self.live.console.print(text, markup=False, highlight=False)
            else:
                self.status = text
