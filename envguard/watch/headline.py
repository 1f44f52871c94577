"""What watch's report says first (pure): the fix as the code to write (`DataLoader(num_workers=8,
persistent_workers=True)` or `torch.set_num_threads(1)`), built from the diagnosis's structured advice; the
load seen during the run beside it; the per-batch data wait's p50/p95."""

from __future__ import annotations

from dataclasses import dataclass

from envguard.watch.records import LoaderTotals, WatchRun
from envguard.watch.result import Diagnosis
from envguard.watch.summary import dominant, figures, steady

DEFAULTS = {"prefetch_factor": "2", "persistent_workers": "False", "pin_memory": "False"}  # DataLoader's own
NOT_CODE = {  # advice whose fix is not a DataLoader argument
    "storage": "faster storage for the data, not more workers (see why)",
    "augmentation": "cheaper batches (less CPU per batch), not more workers",
}


def _arguments(call: str) -> dict[str, str]:
    """`num_workers=2, prefetch_factor=2` (Setting.call) as {name: value}."""
    inner = call.removeprefix("DataLoader(").removesuffix(")")
    return dict(part.split("=", 1) for part in inner.split(", ") if "=" in part)


def fix(diagnosis: Diagnosis) -> str | None:
    """The change to make, as code where it is code: the DataLoader arguments that change (each other one
    as the loader has it), or torch.set_num_threads(K); None where nothing is to change."""
    change = diagnosis.recommendation
    if change is None:
        return None
    if change.setting == "threads" and change.value is not None:
        return f"torch.set_num_threads({change.value})"
    if change.setting in NOT_CODE:
        return NOT_CODE[change.setting]
    if change.setting != "num_workers" or not change.dataloader:
        return None
    now = _arguments(diagnosis.pipeline.current.call()) if diagnosis.pipeline is not None else {}
    new = _arguments(change.dataloader)
    changed = [f"{k}={v}" for k, v in new.items() if v != now.get(k, DEFAULTS.get(k))]
    return f"DataLoader({', '.join(changed)})" if changed else None


def fix_line(diagnosis: Diagnosis) -> str | None:
    """`fix: DataLoader(num_workers=6, persistent_workers=True), expected ~2.50x`."""
    code = fix(diagnosis)
    if code is None:
        return None
    gain = diagnosis.recommendation.expected_speedup if diagnosis.recommendation else None
    return f"fix: {code}" + (f", expected ~{gain:.2f}x" if gain is not None else "")


@dataclass(frozen=True, slots=True)
class Load:
    """The load seen over the steady window: cores other processes kept busy, the host's busy cores (mean,
    least and most per interval) of `cores`, the job's usable CPUs, CPU pressure (PSI some avg10, percent)
    and the other load as the input-pipeline model counted it (runnable processes competing)."""

    others_cores: float
    busy_cores: float
    busy_least: float
    busy_most: float
    cores: int
    usable: int
    psi_cpu: float | None
    competing: float | None


def load(run: WatchRun, diagnosis: Diagnosis) -> Load:
    fig = figures(run)
    window = steady(run.samples) if len(run.samples) > 1 else list(run.samples)
    busy = [s.host.cpu / 100 * len(s.host.per_core) for s in window] or [fig.busy_cores]
    return Load(
        others_cores=round(max(0.0, fig.busy_cores - fig.job_cores), 2),
        busy_cores=round(fig.busy_cores, 2),
        busy_least=round(min(busy), 2),
        busy_most=round(max(busy), 2),
        cores=fig.cores,
        usable=run.usable_cpus,
        psi_cpu=round(fig.psi_cpu, 1) if fig.psi_cpu is not None else None,
        competing=round(diagnosis.pipeline.cores.others, 2) if diagnosis.pipeline is not None else None,
    )


def load_line(seen: Load) -> str:
    """`load: other processes 1.2 cores; host 2.0 of 2 cores busy (1.1-2.0); CPU pressure 35%`."""
    spread = (
        f" ({seen.busy_least:.1f}-{seen.busy_most:.1f})" if seen.busy_most - seen.busy_least >= 0.1 else ""
    )
    parts = [
        f"other processes {seen.others_cores:.1f} cores",
        f"host {seen.busy_cores:.1f} of {seen.cores} cores busy{spread}",
    ]
    if seen.usable != seen.cores:
        parts.append(f"{seen.usable} usable by the job")
    if seen.psi_cpu is not None:
        parts.append(f"CPU pressure {seen.psi_cpu:.0f}%")
    if seen.competing is not None and abs(seen.competing - seen.others_cores) >= 0.1:
        parts.append(f"the model counts {seen.competing:.1f} competing")
    return "load: " + "; ".join(parts)


def main_loader(run: WatchRun) -> LoaderTotals | None:
    """The loader the loop spent its time in (the final totals, else the last sample's)."""
    return dominant(run.loaders or (run.samples[-1].loaders if run.samples else ()))


def wait_line(loader: LoaderTotals | None) -> str | None:
    """`data wait per batch: p50 1.2 ms, p95 40.3 ms (256 of 1200 batches sampled)`; None without waits."""
    quantiles = loader.wait_percentiles() if loader is not None else None
    if loader is None or quantiles is None:
        return None
    p50, p95 = quantiles
    return (
        f"data wait per batch: p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms "
        f"({len(loader.waits)} of {loader.batches} batches sampled)"
    )
