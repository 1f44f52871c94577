"""Render `envguard smoke`: the JSON body (`to_dict`; output.document puts the schema_version first), the
human view (rich tables with a terminal bar chart of throughput against workers), Markdown, and a PNG plot."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

import msgspec

from envguard.findings import markdown as findings_markdown
from envguard.findings import table as findings_table
from envguard.findings import verdict_line
from envguard.output import NARROW, Views, console_text, human_bytes, terminal_width, text_console
from envguard.smoke.measured import MemoryUse, SeededRuns
from envguard.smoke.measured_pipeline import CrossProcess, LoaderChecks
from envguard.smoke.rates import below_loader_floor
from envguard.smoke.readpasses import Pass, StorageResult
from envguard.smoke.report import (
    DatasetResult,
    PipelineRecords,
    RecordingOutcome,
    SmokeOptions,
    SmokeReport,
    SweepRow,
)

BAR_WIDTH = 40


def views(report: SmokeReport) -> Views:
    return Views(lambda: to_dict(report), lambda: human(report), lambda: markdown(report))


def markdown(report: SmokeReport) -> str:
    return findings_markdown(report.findings)


# -- JSON


def to_dict(report: SmokeReport) -> dict[str, Any]:
    """The report as JSON (no schema_version: output.document adds the one). The records the module
    measured appear as it printed them; the per-sample digests stay inside the analysis."""
    return {
        "environment": report.environment,
        "python": report.python,
        "torch": report.torch,
        "numpy": report.numpy,
        "device": report.device,
        "start_method": report.start_method,
        "cpus": dataclasses.asdict(report.cpus),
        "shm": dataclasses.asdict(report.shm),
        "datasets": [dataclasses.asdict(d) for d in report.datasets],
        "recommendations": [dataclasses.asdict(r) for r in report.recommendations],
        "determinism": _determinism(report.determinism),
        "gpu": None if report.gpu is None else as_printed(report.gpu),
        "findings": [dataclasses.asdict(f) for f in report.findings],
        "budget_s": report.budget_s,
        "elapsed_s": report.elapsed_s,
        "options": _options(report.options),
        "phase_seconds": dict(report.phase_seconds),
        "pipeline": _pipeline(report.pipeline),
        "storage": _storage(report.storage, report.decode_skipped),
        "recording": _recording(report.recording),
        "memory": msgspec.structs.asdict(report.memory),
    }


def as_printed(record: object) -> Any:
    """A measured record as the module printed it: its keys, sorted (it prints them so)."""
    return _sorted(msgspec.to_builtins(record))


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(inner) for key, inner in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_sorted(inner) for inner in value]
    return value


def _determinism(record: SeededRuns | None) -> dict[str, Any]:
    """Digests per run (the per-sample records stay inside the analysis)."""
    if record is None:
        return {}
    runs = {
        name: {
            "workers": run.workers,
            "persistent_workers": run.persistent,
            "order_sha256": list(run.order_digests),
            "stream_sha256": list(run.stream_digests),
            "seconds": run.seconds,
        }
        for name, run in sorted(record.runs.items())
    }
    return {
        "dataset": record.dataset,
        "seed": record.seed,
        "samples": record.limit,
        "batch_size": record.batch_size,
        "runs": runs,
        "skipped": list(record.skipped),
    }


def _pipeline(records: PipelineRecords) -> dict[str, Any]:
    """Start-method safety, the user's loader, worker memory, start-up and the fresh interpreters (the
    sections measured, in this order)."""
    loader, cross = records.loader, records.cross_process
    sections = {
        "start_method_safety": as_printed(records.start_method_safety),
        "loader": None if loader is None else _loader(loader),
        "memory": as_printed(records.memory),
        "startup": as_printed(records.startup),
        "cross_process": None if cross is None else _cross_process(cross),
    }
    return {name: section for name, section in sections.items() if section is not None}


def _loader(checks: LoaderChecks) -> Any:
    """The loader's checks as printed: the settings alone for an IterableDataset, else both runs."""
    walked = (
        {"iterable": True}
        if checks.iterable
        else {
            "run1": checks.run1,
            "run2": checks.run2,
            "first_batch_s": checks.first_batch_s,
            "identity": checks.identity,
        }
    )
    return as_printed({"settings": checks.settings, "limit": checks.limit, **walked})


def _cross_process(record: CrossProcess) -> dict[str, Any]:
    """The interpreters' index orders (their per-index digests stay inside the analysis)."""
    return {
        "seeds": list(record.seeds),
        "limit": record.limit,
        "seconds": record.seconds,
        "control": record.control,
        "orders": {seed: None if r.order is None else list(r.order) for seed, r in record.runs.items()},
    }


def _rates(p: Pass) -> tuple[float, float]:
    """A pass's MB/s and files/s as reported."""
    return round(p.mb_per_s, 2), round(p.files_per_s, 1)


def _storage(result: StorageResult | None, decode_skipped: str | None) -> dict[str, Any]:
    """The storage test, MB/s and files/s next to each pass."""
    if result is None:
        return {}
    data = dataclasses.asdict(result)
    data["dropped"] = result.dropped
    data["passes"] = [
        dict(dataclasses.asdict(p), mb_per_s=_rates(p)[0], files_per_s=_rates(p)[1]) for p in result.passes
    ]
    data["decode_skipped"] = decode_skipped
    return data


def _recording(outcome: RecordingOutcome) -> dict[str, Any]:
    """What was compared and what was written (each only when it was)."""
    done = (("compared", outcome.compared), ("written", outcome.written))
    return {name: dataclasses.asdict(part) for name, part in done if part is not None}


def _options(options: SmokeOptions) -> dict[str, Any]:
    data = dataclasses.asdict(options)
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in data.items()}


# -- the human view


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


def storage_lines(result: StorageResult) -> str:
    """One line per storage pass."""
    lines = [f"Storage test of {result.path} ({result.fstype}, cold reads by {result.method}):"]
    for p in result.passes:
        heat = "cold" if p.cold and result.dropped else "warm"
        mb_per_s, files_per_s = _rates(p)
        lines.append(
            f"  {heat:>4} {p.order:<10} {mb_per_s:9.1f} MB/s {files_per_s:9.0f} files/s "
            f"({p.files} files, median first read {p.median_first_ms:.3f} ms)"
        )
    return "\n".join(lines)


def _memory(use: MemoryUse) -> str:
    """The memory limit each process ran under, for the environment line."""
    if use.limit_bytes is None:
        return "no memory limit"
    return f"memory limit {use.limit_bytes / 2**30:.1f} GiB per process"


def human(report: SmokeReport, width: int | None = None) -> str:
    """The human view at the terminal's width (COLUMNS honoured): environment line, sweep tables and bars,
    recommendations, findings, verdict."""
    console = text_console(width)
    columns = console.width
    cpus = report.cpus
    console.print(
        f"envguard smoke: {report.environment} (python {report.python}, torch {report.torch}, "
        f"numpy {report.numpy or 'absent'}; device {report.device}; start method {report.start_method}; "
        f"{cpus.usable} usable CPUs, {cpus.physical} physical cores; {_memory(report.memory)}) in "
        f"{report.elapsed_s:.1f} s",
        markup=False,
    )
    if report.storage is not None:
        console.print(storage_lines(report.storage), markup=False)
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
    return console_text(console)


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
