"""Render a watch: the JSON body (the run, the diagnosis, the derived timeline and every raw sample), the
final report (80 columns) and Markdown."""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec

from envguard.findings import markdown as findings_markdown
from envguard.findings import table
from envguard.output import Views, console_text, human_bytes, text_console
from envguard.watch import headline
from envguard.watch.records import JobEnvironment, LoaderTotals, WatchRun
from envguard.watch.result import WatchResult
from envguard.watch.summary import timeline

WIDTH = 80


def identity(run: WatchRun) -> str:
    """python, torch and its build, numpy, CUDA of the watched job (from the hook, inside its interpreter)."""
    env = run.hook.env
    if env is None:
        return "environment: unknown (no hook data: it is reported once the job iterates a torch DataLoader)"
    build = f"CUDA {env.torch_cuda}" if env.torch_cuda else "CPU build"
    return (
        f"python {env.python}, torch {env.torch} ({build}), numpy {env.numpy or 'none'}\n"
        f"  interpreter {env.executable}"
    )


def _loader_line(lt: LoaderTotals) -> str:
    s = lt.settings
    who = f"rank {lt.rank}" if lt.rank is not None else f"pid {lt.pid}"
    rate = lt.batches / lt.loop_s if lt.loop_s > 0 else 0.0
    return (
        f"{who} loader {lt.id} ({s.dataset}): {lt.batches} batches, {rate:.1f}/s, data wait "
        f"{lt.data_wait_fraction or 0:.0%}\n    num_workers={s.num_workers} batch_size={s.batch_size} "
        f"pin_memory={s.pin_memory} prefetch_factor={s.prefetch_factor}\n    "
        f"persistent_workers={s.persistent_workers}; first batch after {lt.first_s:.2f} s"
        + (f"; the step's intra-op threads {s.threads}" if s.threads else "")
    )


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


def human(result: WatchResult) -> str:
    """The final report, 80 columns."""
    run, diagnosis = result.run, result.diagnosis
    console = text_console(WIDTH)

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
    first = headline.fix_line(diagnosis)
    if first is not None:  # the fix first, in one short line; then why
        say(first)
        say(f"why: {diagnosis.headline}")
    else:
        say(diagnosis.headline)
    if diagnosis.recommendation is not None:
        say(f"  {diagnosis.recommendation.text}")
    say(headline.load_line(headline.load(run, diagnosis)))
    waits = headline.wait_line(headline.main_loader(run))
    if waits is not None:
        say(waits)
    if diagnosis.checked is not None:
        say(f"=> {diagnosis.checked.text}")
    for lt in run.loaders:
        say(f"  {_loader_line(lt)}")
    say("  processes (peak CPU, peak USS):")
    for line in _process_summary(run):
        say(f"    {line}")
    console.print(table(diagnosis.findings, "Findings", WIDTH))
    return console_text(console)


def _environment(env: JobEnvironment | None) -> dict[str, Any]:
    return msgspec.structs.asdict(env) if env is not None else {}


def _waits(loader: LoaderTotals | None) -> dict[str, Any] | None:
    """p50/p95 of the per-batch data wait (seconds) over the waits sampled of how many batches."""
    quantiles = loader.wait_percentiles() if loader is not None else None
    if loader is None or quantiles is None:
        return None
    p50, p95 = quantiles
    return {
        "p50_s": round(p50, 6),
        "p95_s": round(p95, 6),
        "sampled": len(loader.waits),
        "batches": loader.batches,
    }


def _loader_dict(lt: LoaderTotals) -> dict[str, Any]:
    quantiles = lt.wait_percentiles()
    p50, p95 = (round(q, 6) for q in quantiles) if quantiles else (None, None)
    return dict(
        msgspec.to_builtins(lt),
        data_wait_fraction=lt.data_wait_fraction,
        data_wait_p50_s=p50,
        data_wait_p95_s=p95,
    )


def to_dict(result: WatchResult) -> dict[str, Any]:
    """The JSON body: the run (each loader with its data_wait_fraction), the job's environment, the run's
    data_wait_fraction, the diagnosis, the derived timeline and every raw sample."""
    run, diagnosis = result.run, result.diagnosis
    data = msgspec.to_builtins(run)
    samples = data.pop("samples")
    del data["spans"]  # --trace's file holds them
    data["hook"]["env"] = _environment(run.hook.env)
    data["loaders"] = [_loader_dict(lt) for lt in run.loaders]
    return {
        "run": data,
        "environment": _environment(run.hook.env),
        "data_wait_fraction": diagnosis.data_wait_fraction,
        "fix": headline.fix(diagnosis),
        "load": dataclasses.asdict(headline.load(run, diagnosis)),
        "data_wait_per_batch": _waits(headline.main_loader(run)),
        "diagnosis": dataclasses.asdict(diagnosis),
        "timeline": [dataclasses.asdict(row) for row in timeline(run)],
        "samples": samples,
    }


def markdown(result: WatchResult) -> str:
    run, diagnosis = result.run, result.diagnosis
    lines = [
        f"### envguard watch: `{' '.join(run.command) or f'pid {run.pid}'}`",
        "",
        f"_{identity(run).replace(chr(10) + '  ', '; ')}_",
        "",
        f"**{diagnosis.headline}**",
        "",
    ]
    code = headline.fix(diagnosis)
    if code is not None:
        lines[4:4] = [f"**Fix: `{code}`**", ""]
    if diagnosis.recommendation is not None:
        lines += [f"Why: {diagnosis.recommendation.text}", ""]
    waits = headline.wait_line(headline.main_loader(run))
    lines += [f"_{headline.load_line(headline.load(run, diagnosis))}_", ""] + (
        [f"_{waits}_", ""] if waits else []
    )
    if diagnosis.checked is not None:
        lines += [f"Checked: {diagnosis.checked.text}", ""]
    lines += [f"- {_loader_line(lt).replace(chr(10) + '    ', '; ')}" for lt in run.loaders]
    return "\n".join(lines) + "\n\n" + findings_markdown(diagnosis.findings)


def views(result: WatchResult) -> Views:
    return Views(lambda: to_dict(result), lambda: human(result), lambda: markdown(result))
