"""Views of a watch: the live panel (rich, 80 columns), the final report, JSON (schema_version, the whole
timeline), Markdown, and a PNG timeline (matplotlib, when installed)."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

from envguard.errors import BadInputError
from envguard.findings import markdown as findings_markdown
from envguard.findings import table
from envguard.output import human_bytes
from envguard.watch.diagnose import Diagnosis
from envguard.watch.model import SCHEMA_VERSION, LoaderTotals, Sample, WatchRun
from envguard.watch.stats import timeline

WIDTH = 80


def identity(run: WatchRun) -> str:
    """python, torch and its build, numpy, CUDA of the watched job (from the hook, inside its interpreter)."""
    env = run.hook.env
    if not env:
        return "environment: unknown (no hook data: it is reported once the job iterates a torch DataLoader)"
    build = f"CUDA {env['torch_cuda']}" if env.get("torch_cuda") else "CPU build"
    return (
        f"python {env.get('python')}, torch {env.get('torch')} ({build}), numpy "
        f"{env.get('numpy') or 'none'}\n"
        f"  interpreter {env.get('executable')}"
    )


def _loader_line(lt: LoaderTotals) -> str:
    s = lt.settings
    who = f"rank {lt.rank}" if lt.rank is not None else f"pid {lt.pid}"
    rate = lt.batches / lt.loop_s if lt.loop_s > 0 else 0.0
    return (
        f"{who} loader {lt.id} ({s.get('dataset')}): {lt.batches} batches, {rate:.1f}/s, data wait "
        f"{lt.data_wait_fraction or 0:.0%}\n    num_workers={s.get('num_workers')} "
        f"batch_size={s.get('batch_size')} "
        f"pin_memory={s.get('pin_memory')} prefetch_factor={s.get('prefetch_factor')}\n    "
        "persistent_workers="
        f"{s.get('persistent_workers')}; first batch after {lt.first_s:.2f} s"
    )


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


def render(run: WatchRun, diagnosis: Diagnosis) -> str:
    """The final report, 80 columns."""
    from rich.console import Console

    console = Console(file=io.StringIO(), width=WIDTH, highlight=False, soft_wrap=False)

    def say(text: str) -> None:
        console.print(text, markup=False)

    say(f"envguard watch: {' '.join(run.command) or f'pid {run.pid}'}")
    say(f"  {identity(run)}")
    exit_text = f"exit code {run.exit_code}" if run.exit_code is not None else "attached (--pid)"
    say(
        f"  {run.duration:.1f} s, {len(run.samples)} samples every {run.interval:g} s; {exit_text}; "
        f"{run.usable_cpus} usable CPUs ({run.physical_cpus} physical)"
    )
    say("")
    say(diagnosis.headline)
    if diagnosis.recommendation is not None:
        say(f"-> {diagnosis.recommendation.text}")
    for lt in run.loaders:
        say(f"  {_loader_line(lt)}")
    say("  processes (peak CPU, peak USS):")
    for line in _process_summary(run):
        say(f"    {line}")
    console.print(table(diagnosis.findings, "Findings"))
    output: str = console.file.getvalue()  # type: ignore[attr-defined]
    return output


def _process_summary(run: WatchRun) -> list[str]:
    seen: dict[int, tuple[str, str, float, int]] = {}
    for sample in run.samples:
        for p in sample.procs:
            _, _, cpu, uss = seen.get(p.pid, (p.role, p.name, 0.0, 0))
            seen[p.pid] = (p.role, p.name, max(cpu, p.cpu), max(uss, p.uss or p.rss))
    lines = [
        f"{pid} {role} {name[:24]}: {cpu:.0f}% CPU, {human_bytes(uss)}"
        for pid, (role, name, cpu, uss) in sorted(seen.items())[:8]
    ]
    if len(seen) > 8:
        lines.append(f"... and {len(seen) - 8} more")
    return lines or ["none sampled"]


def to_dict(run: WatchRun, diagnosis: Diagnosis) -> dict[str, Any]:
    """JSON-ready: schema_version first, the diagnosis, each loader's and the run's data_wait_fraction, the
    derived timeline and every raw sample."""
    data = dataclasses.asdict(run)
    samples = data.pop("samples")
    loaders = [dict(dataclasses.asdict(lt), data_wait_fraction=lt.data_wait_fraction) for lt in run.loaders]
    data["loaders"] = loaders
    return {
        "schema_version": SCHEMA_VERSION,
        "run": data,
        "environment": run.hook.env,
        "data_wait_fraction": diagnosis.data_wait_fraction,
        "diagnosis": dataclasses.asdict(diagnosis),
        "timeline": timeline(run),
        "samples": samples,
    }


def markdown(run: WatchRun, diagnosis: Diagnosis) -> str:
    lines = [
        f"### envguard watch: `{' '.join(run.command) or f'pid {run.pid}'}`",
        "",
        f"_{identity(run).replace(chr(10) + '  ', '; ')}_",
        "",
        f"**{diagnosis.headline}**",
        "",
    ]
    if diagnosis.recommendation is not None:
        lines += [f"Fix: {diagnosis.recommendation.text}", ""]
    lines += [f"- {_loader_line(lt).replace(chr(10) + '    ', '; ')}" for lt in run.loaders]
    return "\n".join(lines) + "\n\n" + findings_markdown(diagnosis.findings)


def plot(run: WatchRun, path: Path) -> None:
    """A PNG timeline: GPU util, CPU, data-wait fraction, disk MB/s."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise BadInputError(f"--plot {path}: matplotlib is not installed (pip install matplotlib)") from None
    rows = timeline(run)
    t = [r["t"] for r in rows]
    series = (
        ("data wait (0..1)", ("data_wait_fraction",), 1.0),
        ("CPU % (host, job)", ("cpu", "job_pct"), 100.0),
        ("GPU util %", ("gpu_util",), 100.0),
        ("disk read MB/s", ("disk_read_mb_s",), None),
    )
    for r in rows:
        r["job_pct"] = (
            None if r["job_cores"] is None else 100.0 * float(r["job_cores"]) / max(run.usable_cpus, 1)
        )
    figure, axes = plt.subplots(len(series), 1, figsize=(8, 7), sharex=True)
    for axis, (label, keys, top) in zip(axes, series, strict=True):
        for key in keys:
            values = [float("nan") if r[key] is None else r[key] for r in rows]
            axis.plot(t, values, label=key)
        if all(r[keys[0]] is None for r in rows):
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
