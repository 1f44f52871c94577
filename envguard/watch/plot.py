"""`--plot FILE`: a watch's timeline as a PNG (matplotlib, when installed): data wait, CPU, GPU, disk."""

from __future__ import annotations

from pathlib import Path

from envguard.errors import BadInputError
from envguard.version import install_line
from envguard.watch.records import WatchRun
from envguard.watch.summary import Interval, timeline

# (panel label, the series it draws, the y-axis top or None for automatic)
PANELS: tuple[tuple[str, tuple[str, ...], float | None], ...] = (
    ("data wait (0..1)", ("data_wait_fraction",), 1.0),
    ("CPU % (host, job)", ("cpu", "job_pct"), 100.0),
    ("GPU util %", ("gpu_util",), 100.0),
    ("disk read MB/s", ("disk_read_mb_s",), None),
)


def _series(rows: tuple[Interval, ...], key: str, usable_cpus: int) -> list[float | None]:
    """One plotted series; `job_pct` is the job's cores as a percent of the usable CPUs."""
    if key == "job_pct":
        return [100.0 * row.job_cores / max(usable_cpus, 1) for row in rows]
    values: list[float | None] = [getattr(row, key) for row in rows]
    return values


def plot(run: WatchRun, path: Path) -> None:
    """A PNG timeline: GPU util, CPU, data-wait fraction, disk MB/s."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise BadInputError(f"--plot {path}: matplotlib is not installed ({install_line('plot')})") from None
    rows = timeline(run)
    t = [row.t for row in rows]
    figure, axes = plt.subplots(len(PANELS), 1, figsize=(8, 7), sharex=True)
    for axis, (label, keys, top) in zip(axes, PANELS, strict=True):
        for key in keys:
            values = _series(rows, key, run.usable_cpus)
            axis.plot(t, [float("nan") if v is None else v for v in values], label=key)
        if all(v is None for v in _series(rows, keys[0], run.usable_cpus)):
            axis.text(
                0.5,
                0.5,
                "no data" if keys[0] != "gpu_util" else (run.gpu_note or "no GPU"),
                ha="center",
                va="center",
                transform=axis.transAxes,
                fontsize=8,
            )
        if top is not None:
            axis.set_ylim(0, top * 1.05)
        if len(keys) > 1:
            axis.legend(fontsize=7, loc="lower right")
        axis.set_ylabel(label, fontsize=8)
        axis.grid(alpha=0.3)
    axes[0].set_title(" ".join(run.command)[:80] or f"pid {run.pid}", fontsize=9)
    axes[-1].set_xlabel("seconds")
    figure.tight_layout()
    try:
        figure.savefig(path, dpi=100)
    except OSError as exc:
        raise BadInputError(f"--plot {path}: cannot write it ({exc.strerror})") from None
    finally:
        plt.close(figure)
