"""`envguard smoke [SOURCE]`: DataLoader determinism and throughput, run in the environment's own
interpreter."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from envguard.atomic import write_bytes
from envguard.cli.options import Rule, converted, declared, loader_options, number, styles
from envguard.distributed import render as distributed_render
from envguard.distributed.run import DEFAULT_TIMEOUT_S, run_distributed_check
from envguard.errors import UsageError
from envguard.findings import exit_code
from envguard.machine import host
from envguard.output import Style, present, progress_wanted
from envguard.version import install_line


def _workers(text: str) -> tuple[int, ...]:
    """--workers LIST: the num_workers counts to sweep."""
    try:
        counts = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError as exc:
        raise UsageError(
            f"--workers {text}: expected a comma-separated list of counts such as 0,1,2,4"
        ) from exc
    if not counts or min(counts) < 0:
        raise UsageError(f"--workers {text}: counts must be 0 or more")
    return counts


SWEEPABLE = ("num_workers", "prefetch_factor")


def _sweep(text: str) -> tuple[str, ...]:
    """--sweep NAMES: the loader arguments envguard may vary (issue 10)."""
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    wrong = [n for n in names if n not in SWEEPABLE]
    if not names or wrong:
        raise UsageError(
            f"--sweep {text}: expected a comma-separated list of {', '.join(SWEEPABLE)} "
            "(the other DataLoader arguments stay as your loader sets them)"
        )
    return names


def _seed(text: str) -> int:
    """An integer seed torch, NumPy and random all accept: 0 <= seed < 2**63."""
    try:
        value = int(text, 10)
    except ValueError:
        value = -1
    if not 0 <= value < 2**63:
        raise UsageError(f"--seed {text}: expected a whole number from 0 to 2**63-1 (e.g. 1234)")
    return value


SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _memory_limit(text: str) -> int:
    """--memory-limit SIZE: bytes (`8G`, `512M`, `1.5G`; K, M, G, T are powers of 1024), or 0 for `none`."""
    cleaned = text.strip().upper().removesuffix("IB").removesuffix("B")
    if cleaned == "NONE":
        return 0
    unit = cleaned[-1:] if cleaned[-1:] in ("K", "M", "G", "T") else ""
    number = cleaned.removesuffix(unit) if unit else cleaned
    try:
        value = float(number) * SIZE_UNITS[unit]
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 256 << 20:
        raise UsageError(
            f"--memory-limit {text}: expected a size of at least 256M such as 8G or 512M, or none"
        )
    return int(value)


RULES = (
    Rule(
        "loader",
        "--loader checks your own DataLoader as given; drop --dataset/--data (or --loader)",
        excludes=("dataset", "data_dir"),
    ),
    Rule(
        "dataset",
        "--data and --dataset are mutually exclusive: --data DIR times reading the files in DIR, "
        "--dataset FILE.py:NAME your own Dataset; give one",
        excludes=("data_dir",),
    ),
    Rule(
        "step_threads",
        "--step-threads describes the training step beside --loader FILE.py:NAME and --step-ms; give them "
        "(or drop --step-threads)",
        needs=("loader", "step_ms"),
    ),
    Rule(
        "sweep",
        "--sweep NAMES times your own DataLoader: give it with --loader FILE.py:NAME",
        needs=("loader",),
    ),
    Rule(
        "decode",
        "--decode image decodes the files of --data DIR; add --data DIR (or drop --decode)",
        needs=("data_dir",),
    ),
    Rule(
        "timeout",
        "--timeout is how long --distributed waits for the other ranks; add --distributed",
        needs=("distributed",),
    ),
)
FILE = click.Path(dir_okay=False, path_type=Path)


@dataclass(frozen=True)
class SmokeArgs:
    """smoke's command line as click parsed and checked it (every rule of RULES holds)."""

    source: str | None
    device: str
    budget: float
    workers: tuple[int, ...] | None
    num_workers: int | None
    batch_size: int
    io_ms: float
    cpu_ms: float
    loader: str | None
    step_ms: float | None
    step_cores: float | None
    step_threads: int | None
    data_dir: Path | None
    decode: str | None
    dataset: str | None
    sweep: tuple[str, ...] | None
    start_method: str | None
    local_ranks: int
    memory_limit: int | None
    lock: Path | None
    record: Path | None
    compare: Path | None
    seed: int
    distributed: bool
    timeout: float | None
    plot: Path | None
    style: Style
    output: str | None


@declared("smoke", rules=RULES)
@click.argument("source", required=False)
@click.option(
    "--device",
    type=click.Choice(["auto", "cpu", "cuda"]),
    default="auto",
    show_default=True,
    help="Where the GPU checks run; auto uses CUDA when torch sees it.",
)
@click.option(
    "--budget",
    metavar="SECONDS",
    default="28",
    show_default=True,
    callback=number("--budget", 3.0, "seconds"),
    help="Seconds the whole command may take (the sweep shrinks to fit).",
)
@click.option(
    "--workers",
    metavar="LIST",
    callback=converted(_workers),
    help="num_workers to sweep, e.g. 0,2,4 (default: 0 to the usable CPUs).",
)
@click.option(
    "--num-workers",
    type=click.IntRange(min=0),
    help="The num_workers your training uses: judged against the sweep.",
)
@click.option(
    "--batch-size", type=click.IntRange(min=1), default=32, show_default=True, help="Batch size of the sweep."
)
@click.option(
    "--io-ms",
    metavar="MS",
    default="10",
    show_default=True,
    callback=number("--io-ms", 0.1, "milliseconds"),
    help="Per-sample wait of the synthetic I/O-bound dataset.",
)
@click.option(
    "--cpu-ms",
    metavar="MS",
    default="5",
    show_default=True,
    callback=number("--cpu-ms", 0.1, "milliseconds"),
    help="Per-sample CPU time of the synthetic CPU-bound dataset.",
)
@loader_options(
    "smoke checks it as given.",
    step_default="the synthetic sweep's step: half the ideal time between batches",
)
@click.option(
    "--data",
    "data_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Time reading the files under DIR instead of the synthetic datasets.",
)
@click.option(
    "--decode",
    type=click.Choice(["image"]),
    help="With --data: decode each file as an image with PIL in the sweep (shows whether decoding is the "
    "bottleneck).",
)
@click.option(
    "--dataset",
    metavar="FILE.py:NAME",
    help="Check and time your own Dataset (a class or a function returning one) instead of the synthetic "
    "ones.",
)
@click.option(
    "--sweep",
    metavar="NAMES",
    callback=converted(_sweep),
    help="With --loader: the DataLoader arguments envguard may vary while timing your loader (num_workers, "
    "prefetch_factor); everything else stays as your loader sets it.",
)
@click.option(
    "--start-method",
    type=click.Choice(["fork", "spawn", "forkserver"]),
    help="Start every DataLoader's workers this way (default: the environment's own default).",
)
@click.option(
    "--local-ranks",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Training processes per node: the per-worker memory projection multiplies by it.",
)
@click.option(
    "--memory-limit",
    metavar="SIZE",
    callback=converted(_memory_limit),
    help="Memory each process of the run (the module, every DataLoader worker) may allocate, e.g. 8G; none "
    "for no limit (default: 3/4 of the memory available, at least 2G).",
)
@click.option(
    "--lock",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Compare the seeded streams with the fingerprints recorded in this lock or snapshot.",
)
@click.option(
    "--record",
    type=FILE,
    metavar="FILE.json",
    help="Write the first batches' per-sample digests and this environment's fingerprints to FILE.json.",
)
@click.option(
    "--compare",
    type=FILE,
    metavar="FILE.json",
    help="Check the first batches against a --record file from another machine or environment (exit 1 on a "
    "mismatch).",
)
@click.option(
    "--seed",
    metavar="INT",
    default="1234",
    show_default=True,
    callback=converted(_seed),
    help="Seed of the determinism runs (and of the sampler with --distributed).",
)
@click.option(
    "--distributed",
    is_flag=True,
    help="One per rank under torchrun, srun or mpirun: compare environments, locks and DistributedSampler "
    "shards across ranks.",
)
@click.option(
    "--timeout",
    metavar="SECONDS",
    callback=number("--timeout", 1.0, "seconds"),
    help="With --distributed: how long a rank waits for the others before naming those missing "
    "(default 300).",
)
@click.option("--plot", type=FILE, help="Write a PNG of throughput against workers (needs matplotlib).")
@styles()
def smoke(**values: Any) -> int:
    """Prove that SOURCE (a prefix or name:ENV; default: the active environment) loads data deterministically
    and fast: determinism checks, a num_workers sweep, GPU copy speed, verdicts with fixes. Exit 1 on any
    FAIL."""
    return run(SmokeArgs(**values))


def run(args: SmokeArgs) -> int:
    """smoke's run (or this rank's part of --distributed), presented; the exit code."""
    if args.distributed:
        return _distributed(args)
    # smoke's pipeline loads only when it runs (its imports take ~0.17 s): --help and usage errors stay fast
    from envguard.smoke import render
    from envguard.smoke.report import SmokeOptions
    from envguard.smoke.run import run_smoke

    if args.plot is not None and not render.matplotlib_available():
        raise UsageError(
            f"--plot {args.plot}: matplotlib is not installed in envguard's environment; "
            f"{install_line('plot')}, or drop --plot"
        )
    options = SmokeOptions(
        source=args.source,
        device=args.device,  # type: ignore[arg-type]
        budget_s=args.budget,
        workers=args.workers,
        num_workers=args.num_workers,
        batch_size=args.batch_size,
        io_ms=args.io_ms,
        cpu_ms=args.cpu_ms,
        step_ms=args.step_ms,
        step_cores=args.step_cores or 0.0,
        step_threads=args.step_threads,
        data_dir=args.data_dir,
        dataset=args.dataset,
        lock=args.lock,
        seed=args.seed,
        loader=args.loader,
        start_method=args.start_method,
        local_ranks=args.local_ranks,
        sweep=args.sweep,
        decode=args.decode,
        record=args.record,
        compare=args.compare,
        memory_limit=args.memory_limit,
    )
    report = run_smoke(options, progress=progress_wanted(args.style))
    if args.plot is not None:
        write_bytes(args.plot, render.plot_png(report))
    present(render.views(report), args.style, args.output)
    return exit_code(report.findings)


def _distributed(args: SmokeArgs) -> int:
    """`--distributed`: this rank's part of the check across ranks; rank 0 writes the report, every rank
    returns the same exit code. Each rank runs under --memory-limit (default as for a plain run)."""
    from envguard.smoke.settings import per_process_limit  # the in-environment program's rule

    result = run_distributed_check(
        args.source,
        lock=args.lock,
        data_dir=args.data_dir,
        seed=args.seed,
        timeout_s=DEFAULT_TIMEOUT_S if args.timeout is None else args.timeout,
        memory_limit=per_process_limit(args.memory_limit, host.memory_info()),
    )
    if result.rank == 0:  # every rank judges alike; one prints
        present(distributed_render.views(result, "smoke --distributed"), args.style, args.output)
    return exit_code(result.findings)
