"""Sample the watched process tree and the host with psutil, and the GPUs with NVML (nvidia-ml-py) when
present.

The only parts psutil does not provide are read directly: PSI (/proc/pressure/*). A Sampler keeps psutil
Process objects between samples so CPU percentages and read rates are measured over the interval, not since
start.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from envguard.version import install_line
from envguard.watch.records import GpuSample, HostSample, ProcSample

PRESSURE = Path("/proc/pressure")
USS_BUDGET = 0.005  # CPU seconds per second of interval the sampler may spend reading USS


def psi(kind: str, root: Path = PRESSURE) -> float | None:
    """The 'some avg10' share of time (percent) tasks stalled on `kind` (cpu, io, memory); None without
    PSI."""
    try:
        first = (root / kind).read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    for part in first[1:]:
        if part.startswith("avg10="):
            return float(part[6:])
    return None


class Sampler:
    """Samples the tree under `root_pid` (itself included) and the host; the first call primes the
    counters."""

    def __init__(self, root_pid: int, interval: float = 1.0, shm: str = "/dev/shm") -> None:
        import psutil

        self._psutil = psutil
        self.root = psutil.Process(root_pid)
        self.shm = shm
        self._procs: dict[int, Any] = {}
        self._fresh: set[int] = set()
        self._uss: dict[int, tuple[float, int | None]] = {}
        self.uss_budget = USS_BUDGET * interval
        self._reads: dict[int, tuple[float, int]] = {}
        self._disks: tuple[float, dict[str, int]] = (time.monotonic(), self._disk_bytes())
        psutil.cpu_percent(percpu=True)
        psutil.cpu_times_percent()

    def root_alive(self) -> bool:
        """Whether the watched process (attached with --pid) still runs."""
        psutil = self._psutil
        try:
            return bool(self.root.status() != psutil.STATUS_ZOMBIE)
        except psutil.Error:
            return False

    def tree(self) -> list[Any]:
        """The root and its live descendants, reusing Process objects (their CPU counters) across samples."""
        psutil = self._psutil
        try:
            found = [self.root, *self.root.children(recursive=True)]
        except psutil.Error:
            found = []
        current: dict[int, Any] = {}
        self._fresh = set()
        for proc in found:
            known = self._procs.get(proc.pid)
            current[proc.pid] = known if known is not None else proc
            if known is None:
                self._fresh.add(proc.pid)
                with contextlib.suppress(psutil.Error):
                    proc.cpu_percent()
        self._procs = current
        return list(current.values())

    def processes(self) -> tuple[ProcSample, ...]:
        psutil = self._psutil
        out: list[ProcSample] = []
        now = time.monotonic()
        for proc in self.tree():
            try:
                with proc.oneshot():
                    ppid = proc.ppid()
                    out.append(
                        ProcSample(
                            pid=proc.pid,
                            ppid=ppid,
                            name=proc.name(),
                            role="other",
                            cpu=self._cpu(proc),
                            core=_maybe(proc.cpu_num),
                            threads=proc.num_threads(),
                            rss=proc.memory_info().rss,
                            uss=None,
                            state=proc.status(),
                            read_bytes=(read := _maybe(lambda p=proc: p.io_counters().read_bytes)),
                            read_rate=self._rate(proc.pid, now, read),
                        )
                    )
            except psutil.Error:
                continue  # it exited between the listing and the read
        self._refresh_uss([p.pid for p in out])
        return tuple(replace(p, uss=self._uss.get(p.pid, (0.0, None))[1]) for p in out)

    def _refresh_uss(self, pids: list[int]) -> None:
        """USS costs a kernel walk of the page tables (~3 ms for a torch process): read the stalest ones
        first, within USS_BUDGET of the interval, at least one per sample; others keep their last value."""
        spent, start = 0.0, time.process_time()
        self._uss = {pid: value for pid, value in self._uss.items() if pid in self._procs}
        for pid in sorted(pids, key=lambda pid: self._uss.get(pid, (-1.0, None))[0]):
            if spent and spent >= self.uss_budget:
                break
            uss = _maybe(lambda pid=pid: self._procs[pid].memory_full_info().uss)
            self._uss[pid] = (time.monotonic(), uss)
            spent = time.process_time() - start

    def _cpu(self, proc: Any) -> float:
        """Percent of one core over the interval; for a process first seen now, the mean since it started."""
        if proc.pid not in self._fresh:
            return float(proc.cpu_percent())
        times = proc.cpu_times()
        age = time.time() - proc.create_time()
        return round(100.0 * (times.user + times.system) / age, 1) if age > 0.05 else 0.0

    def _rate(self, pid: int, now: float, read: int | None) -> float | None:
        if read is None:
            return None
        before = self._reads.get(pid)
        self._reads[pid] = (now, read)
        if before is None or now <= before[0]:
            return None
        return max(0.0, (read - before[1]) / (now - before[0]))

    def _disk_bytes(self) -> dict[str, int]:
        counters = self._psutil.disk_io_counters(perdisk=True) or {}
        return {name: c.read_bytes for name, c in counters.items() if not name.startswith(("loop", "ram"))}

    def host(self) -> HostSample:
        psutil = self._psutil
        times = psutil.cpu_times_percent()
        per_core = tuple(psutil.cpu_percent(percpu=True))
        memory, swap = psutil.virtual_memory(), psutil.swap_memory()
        try:
            shm = psutil.disk_usage(self.shm)
            shm_used: int | None = int(shm.used)
            shm_total: int | None = int(shm.total)
        except OSError:
            shm_used = shm_total = None
        now, disks = time.monotonic(), self._disk_bytes()
        then, before = self._disks
        self._disks = (now, disks)
        span = max(now - then, 1e-6)
        rates = {d: max(0.0, (v - before[d]) / span) for d, v in disks.items() if d in before}
        return HostSample(
            cpu=sum(per_core) / max(len(per_core), 1),
            per_core=per_core,
            iowait=getattr(times, "iowait", None),
            steal=getattr(times, "steal", None),
            psi_cpu=psi("cpu"),
            psi_io=psi("io"),
            mem_total=int(memory.total),
            mem_available=int(memory.available),
            swap_used=int(swap.used),
            shm_used=shm_used,
            shm_total=shm_total,
            disk_read=rates,
        )


def _maybe(function: Any) -> Any:
    try:
        return function()
    except Exception:  # AccessDenied, unsupported on this platform: the field stays unknown
        return None


class GpuSampler:
    """NVML utilisation, memory, PCIe throughput, clocks and power; `note` says why there are no GPUs."""

    def __init__(self) -> None:
        self.note = ""
        self._nvml: Any = None
        self._handles: list[Any] = []
        try:
            import pynvml

            pynvml.nvmlInit()
            self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
            self._nvml = pynvml
        except ImportError:
            self.note = f"no GPU data: nvidia-ml-py is not installed ({install_line('gpu')})"
        except Exception as exc:  # NVMLError: no driver, no device
            self.note = f"no GPU data: NVML unavailable ({exc})"
        if self._nvml is not None and not self._handles:
            self.note = "no GPU: NVML sees no device"

    def sample(self, pids: set[int]) -> tuple[GpuSample, ...]:
        nvml = self._nvml
        if nvml is None:
            return ()
        out = []
        for index, handle in enumerate(self._handles):
            memory = _maybe(lambda h=handle: nvml.nvmlDeviceGetMemoryInfo(h))
            load = _maybe(lambda h=handle: nvml.nvmlDeviceGetUtilizationRates(h))
            users = _maybe(lambda h=handle: nvml.nvmlDeviceGetComputeRunningProcesses(h)) or []
            rx = _maybe(lambda h=handle: nvml.nvmlDeviceGetPcieThroughput(h, nvml.NVML_PCIE_UTIL_RX_BYTES))
            tx = _maybe(lambda h=handle: nvml.nvmlDeviceGetPcieThroughput(h, nvml.NVML_PCIE_UTIL_TX_BYTES))
            power = _maybe(lambda h=handle: nvml.nvmlDeviceGetPowerUsage(h))
            name = _maybe(lambda h=handle: nvml.nvmlDeviceGetName(h)) or "?"
            out.append(
                GpuSample(
                    index=index,
                    name=name.decode() if isinstance(name, bytes) else str(name),
                    used_by_tree=any(getattr(u, "pid", None) in pids for u in users),
                    utilization=int(load.gpu) if load else None,
                    memory_used=int(memory.used) if memory else None,
                    memory_total=int(memory.total) if memory else None,
                    pcie_rx=rx * 1024.0 if rx is not None else None,
                    pcie_tx=tx * 1024.0 if tx is not None else None,
                    sm_clock=_maybe(lambda h=handle: nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM)),
                    power_w=power / 1000.0 if power is not None else None,
                )
            )
        return tuple(out)
