"""Was the machine busy while a configuration was timed? Evidence from the right sources, read before and
after:

- the process's cgroup `cpu.stat` (v2): `nr_throttled` / `throttled_usec`, the CPU quota (cpu.max) holding us
  back;
- PSI `/proc/pressure/cpu` (`some ... total=` microseconds during which some task waited for a CPU);
- `/proc/stat` minus the CPU of this process and its DataLoader workers: what other processes took (10 ms
  ticks,
  so only read over windows of a second or more).
Each reader returns None where its file does not exist; nothing here raises.
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, Optional, Tuple

CGROUP_ROOT = "/sys/fs/cgroup"
PROC_CGROUP = "/proc/self/cgroup"
PSI_CPU = "/proc/pressure/cpu"
MIN_TICK_WINDOW_S = 1.0  # /proc/stat counts 10 ms ticks: shorter windows read noise


def _text(path: Optional[str]) -> Optional[str]:
    if not path:
        return None
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


def read_keyed(path: Optional[str]) -> Optional[Dict[str, int]]:
    """`key value` lines (cgroup cpu.stat) as a dict of ints."""
    text = _text(path)
    if text is None:
        return None
    out: Dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


def psi_some_total(path: Optional[str] = PSI_CPU) -> Optional[int]:
    """Microseconds some task waited for a CPU since boot (`some ... total=N`), or None without PSI."""
    for line in (_text(path) or "").splitlines():
        if line.startswith("some "):
            for field in line.split()[1:]:
                name, _, value = field.partition("=")
                if name == "total" and value.isdigit():
                    return int(value)
    return None


def own_cpu_stat(proc_cgroup: str = PROC_CGROUP, root: str = CGROUP_ROOT) -> Optional[str]:
    """The cpu.stat file of this process's cgroup (v2 unified hierarchy), or None."""
    for line in (_text(proc_cgroup) or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and parts[0] == "0" and parts[1] == "":
            path = os.path.join(root, parts[2].lstrip("/"), "cpu.stat")
            return path if os.path.exists(path) else None
    return None


def machine_busy_s() -> Optional[float]:
    """CPU seconds all processes have used on this machine (Linux /proc/stat), or None elsewhere."""
    text = _text("/proc/stat")
    try:
        fields = (text or "").splitlines()[0].split()[1:]
        ticks = os.sysconf("SC_CLK_TCK")
        values = [int(v) for v in fields[:8]]
    except (IndexError, ValueError, AttributeError, OSError):
        return None
    return (sum(values) - values[3] - values[4]) / float(ticks)  # minus idle and iowait


def workers_cpu_s(iterator: Any) -> Optional[float]:
    """CPU seconds the iterator's worker processes have used (from /proc/<pid>/stat), or None."""
    total = 0.0
    try:
        ticks = float(os.sysconf("SC_CLK_TCK"))
        for process in getattr(iterator, "_workers", []):
            fields = (_text("/proc/%d/stat" % process.pid) or "").rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    except (ValueError, AttributeError, IndexError, OSError):
        return None
    return total


class Contention:
    """Readings at construction and at `result()`, for one timed configuration."""

    def __init__(self, iterator: Any, cpu_stat: Optional[str] = None, psi: Optional[str] = PSI_CPU) -> None:
        self.iterator, self.cpu_stat_path, self.psi_path = iterator, cpu_stat, psi
        self.start = self._read()

    def _read(self) -> Tuple[Any, ...]:
        return (
            time.perf_counter(),
            machine_busy_s(),
            time.process_time(),
            workers_cpu_s(self.iterator),
            read_keyed(self.cpu_stat_path),
            psi_some_total(self.psi_path),
        )

    def result(self) -> Dict[str, Any]:
        wall0, busy0, main0, workers0, stat0, psi0 = self.start
        wall, busy, main, workers, stat, psi = self._read()
        window = wall - wall0
        out: Dict[str, Any] = {
            "window_s": round(window, 4),
            "others_cpu_fraction": None,
            "throttled_fraction": None,
            "nr_throttled": None,
            "psi_some_fraction": None,
        }
        if window <= 0:
            return out
        if None not in (busy, busy0, workers, workers0) and window >= MIN_TICK_WINDOW_S:
            ours = (main - main0) + (workers - workers0)
            capacity = window * (os.cpu_count() or 1)
            out["others_cpu_fraction"] = round(min(1.0, max(0.0, (busy - busy0 - ours) / capacity)), 4)
        if stat is not None and stat0 is not None and "throttled_usec" in stat and "throttled_usec" in stat0:
            out["throttled_fraction"] = round(
                min(1.0, (stat["throttled_usec"] - stat0["throttled_usec"]) / 1e6 / window), 4
            )
            out["nr_throttled"] = stat.get("nr_throttled", 0) - stat0.get("nr_throttled", 0)
        if psi is not None and psi0 is not None:
            out["psi_some_fraction"] = round(min(1.0, max(0.0, (psi - psi0) / 1e6 / window)), 4)
        return out
