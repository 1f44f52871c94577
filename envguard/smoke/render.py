"""Render `envguard smoke`: JSON, rich tables with a terminal bar chart of throughput against workers, a
PNG plot."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from envguard.findings import table as findings_table
from envguard.findings import verdict_line
from envguard.output import human_bytes
from envguard.smoke.report import DatasetResult, SmokeReport, SweepRow
from envguard.smoke.storage_verdicts import below_loader_floor, storage_line

BAR_WIDTH = 40


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f}"


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


# Columns of the sweep table; below NARROW terminal columns only the PRIMARY ones are shown (the rest are in
# --json, with every batch's raw times).
COLUMNS = (
    "workers",
    "pin",
    "persistent",
    "first batch s",
    "start-up s",
    "epoch-2 first s",
    "samples/s",
    "ideal",
    "efficiency",
    "wait p50 ms",
    "wait p95 ms",
    "others' CPU",
)
PRIMARY = ("workers", "first batch s", "samples/s", "ideal", "efficiency", "wait p95 ms")


def sweep_table(dataset: DatasetResult, width: int | None = None) -> Any:
    """The sweep as a rich table at the terminal's width: every column from NARROW columns up; below that the
    configuration in one column (`2 pin persistent`) and the primary figures only. Nothing is cut short."""
    from rich.table import Table

    from envguard.output import NARROW, terminal_width

    narrow = (width or terminal_width()) < NARROW
    cost = f"L={dataset.latency_ms:g} ms" if dataset.latency_ms is not None else "cost unknown"
    if dataset.cpu_ms:
        cost += f", CPU {dataset.cpu_ms:g} ms"
    origin = "nominal" if dataset.nominal else "measured"
    bound = "loader-bound" if below_loader_floor(dataset) else f"{dataset.bound}-bound"
    title = (
        f"Throughput: {dataset.name} dataset ({bound}, {cost} per sample {origin}; batch "
        f"{human_bytes(dataset.batch_bytes)})"
    )
    out = Table(title=title, title_justify="left")
    shown = PRIMARY if narrow else COLUMNS
    for name in shown:
        out.add_column(name, justify="right", overflow="fold")
    for r in dataset.rows:
        cells = dict(zip(COLUMNS, _cells(r), strict=True))
        if narrow:
            cells["workers"] = " ".join(
                [str(r.workers)] + ["pin"] * r.pin_memory + ["persistent"] * r.persistent_workers
            )
        if r.skipped:
            out.add_row(cells["workers"], f"skipped: {r.skipped}", *([""] * (len(shown) - 2)))
            continue
        out.add_row(*(cells[name] for name in shown))
    return out


def _cells(r: SweepRow) -> list[str]:
    return [
        str(r.workers),
        "yes" if r.pin_memory else "no",
        "yes" if r.persistent_workers else "no",
        _s(r.first_batch_s),
        _s(r.startup_s),
        _s(r.epoch2_first_batch_s),
        f"{r.samples_per_s:.0f}" if r.samples_per_s else "-",
        f"{r.ideal_per_s:.0f}" if r.ideal_per_s else "-",
        "unreliable" if r.unreliable else f"{r.efficiency:.2f}" if r.efficiency is not None else "-",
        _ms(r.wait_p50_s),
        _ms(r.wait_p95_s),
        f"{r.others_cpu:.0%}" if r.others_cpu is not None else "-",
    ]


def bar_chart(dataset: DatasetResult, width: int | None = None) -> str:
    """Best samples/s per worker count as text bars, with efficiency against the ideal, within `width`."""
    from envguard.output import terminal_width

    best: dict[int, tuple[float, float | None]] = {}
    for r in dataset.measured():
        if r.samples_per_s and r.samples_per_s > best.get(r.workers, (0.0, None))[0]:
            best[r.workers] = (r.samples_per_s, r.efficiency)
    if not best:
        return ""
    bars = max(10, min(BAR_WIDTH, (width or terminal_width()) - 40))  # 40: the label, rate and efficiency
    top = max(rate for rate, _eff in best.values())
    lines = [f"samples/s by num_workers ({dataset.name}):"]
    for workers, (rate, eff) in sorted(best.items()):
        filled = max(1, round(bars * rate / top))
        tail = f" ({eff:.2f} of ideal)" if eff is not None else ""
        lines.append(f"  {workers:>3} | {'█' * filled}{' ' * (bars - filled)} {rate:8.0f}{tail}")
    return "\n".join(lines)


def render(report: SmokeReport, width: int | None = None) -> str:
    """The human view at the terminal's width (COLUMNS honoured): environment line, sweep tables and bars,
    recommendations, findings, verdict."""
    from envguard.output import text_console

    console = text_console(width)
    columns = console.width
    cpus = report.cpus
    console.print(
        f"envguard smoke: {report.environment} (python {report.python}, torch {report.torch}, "
        f"numpy {report.numpy or 'absent'}; device {report.device}; start method {report.start_method}; "
        f"{cpus.usable} usable CPUs, {cpus.physical} physical cores) in {report.elapsed_s:.1f} s",
        markup=False,
    )
    if report.storage:
        console.print(storage_line(report.storage), markup=False)
    for dataset in report.datasets:
        if dataset.rows:
            console.print(sweep_table(dataset, columns))
            console.print(bar_chart(dataset, columns), markup=False)
    for rec in report.recommendations:
        console.print(
            f"Recommended for {rec.dataset}: DataLoader(num_workers={rec.workers}, "
            f"pin_memory={rec.pin_memory}, persistent_workers={rec.persistent_workers}): {rec.reason}",
            markup=False,
        )
    console.print(findings_table(report.findings, "Verdicts", columns))
    console.print(verdict_line(report.findings, "smoke"), markup=False)
    output: str = console.file.getvalue()
    return output


def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def plot_png(report: SmokeReport) -> bytes:
    """samples/s against num_workers per dataset, with the ideal as a dashed line (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4.5), dpi=100)
    for dataset in report.datasets:
        best = {r.workers: r for r in sorted(dataset.measured(), key=lambda r: r.samples_per_s or 0.0)}
        if not best:
            continue
        xs = sorted(best)
        measured = [best[w].samples_per_s or 0.0 for w in xs]
        line = axis.plot(xs, measured, marker="o", label=f"{dataset.name} measured")
        ideal = [best[w].ideal_per_s or 0.0 for w in xs]
        if all(ideal):
            axis.plot(xs, ideal, linestyle="--", color=line[0].get_color(), label=f"{dataset.name} ideal")
    from matplotlib.ticker import MaxNLocator

    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_xlabel("num_workers")
    axis.set_ylabel("samples/s (steady state)")
    axis.set_title(f"envguard smoke: {Path(report.environment).name} (torch {report.torch})")
    axis.legend()
    axis.grid(True, alpha=0.3)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return buffer.getvalue()
