"""`envguard smoke [SOURCE]`: DataLoader determinism and throughput, run in the environment's own
interpreter."""

from __future__ import annotations

import math
from pathlib import Path

from envguard.atomic import write_bytes
from envguard.cli.grammar import Arg, Command, Opt, number, styles
from envguard.errors import UsageError
from envguard.findings import exit_code
from envguard.output import Style, present, progress_wanted


def _workers(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
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


def _sweep(text: str | None, loader: str | None) -> tuple[str, ...] | None:
    """--sweep NAMES: the loader arguments envguard may vary (issue 10)."""
    if text is None:
        return None
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    wrong = [n for n in names if n not in SWEEPABLE]
    if not names or wrong:
        raise UsageError(
            f"--sweep {text}: expected a comma-separated list of {', '.join(SWEEPABLE)} "
            "(the other DataLoader arguments stay as your loader sets them)"
        )
    if loader is None:
        raise UsageError(f"--sweep {text} times your own DataLoader: give it with --loader FILE.py:NAME")
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


GRAMMAR = Command(
    "smoke",
    [Arg("source", required=False)],
    [
        Opt(
            "--device",
            choices=("auto", "cpu", "cuda"),
            default="auto",
            show_default=True,
            help="Where the GPU checks run; auto uses CUDA when torch sees it.",
        ),
        Opt(
            "--budget",
            metavar="SECONDS",
            default="28",
            show_default=True,
            check=number("--budget", 3.0, "seconds"),
            help="Seconds the whole command may take (the sweep shrinks to fit).",
        ),
        Opt(
            "--workers",
            dest="workers_text",
            metavar="LIST",
            help="num_workers to sweep, e.g. 0,2,4 (default: 0 to the usable CPUs).",
        ),
        Opt(
            "--num-workers",
            kind="int",
            minimum=0,
            help="The num_workers your training uses: judged against the sweep.",
        ),
        Opt(
            "--batch-size",
            kind="int",
            minimum=1,
            default=32,
            show_default=True,
            help="Batch size of the sweep.",
        ),
        Opt(
            "--io-ms",
            metavar="MS",
            default="10",
            show_default=True,
            check=number("--io-ms", 0.1, "milliseconds"),
            help="Per-sample wait of the synthetic I/O-bound dataset.",
        ),
        Opt(
            "--cpu-ms",
            metavar="MS",
            default="5",
            show_default=True,
            check=number("--cpu-ms", 0.1, "milliseconds"),
            help="Per-sample CPU time of the synthetic CPU-bound dataset.",
        ),
        Opt(
            "--step-ms",
            metavar="MS",
            check=number("--step-ms", 0.0, "milliseconds"),
            help="Simulated training step after each batch (default: half the ideal time between batches).",
        ),
        Opt(
            "--step-cores",
            metavar="N",
            check=number("--step-cores", 0.0, "cores"),
            help="Cores your training step keeps busy, as watch reports it ('a 216 ms step using 1.9 cores'; "
            "default 0: a step that waits on a GPU): the worker advice of --loader weighs the loading "
            "against it.",
        ),
        Opt(
            "--step-threads",
            metavar="N",
            kind="int",
            minimum=1,
            help="Your training step's intra-op threads, as watch reports them ('the step runs torch's 2 "
            "intra-op threads'; default: torch's default in SOURCE): with --step-ms and --step-cores, more "
            "threads than the cores the job gets beside the other load get the thread advice first.",
        ),
        Opt(
            "--data",
            dest="data_dir",
            kind="path",
            exists=True,
            file_okay=False,
            as_path=True,
            help="Time reading the files under DIR instead of the synthetic datasets.",
        ),
        Opt(
            "--decode",
            choices=("image",),
            help="With --data: decode each file as an image with PIL in the sweep (shows whether decoding is "
            "the bottleneck).",
        ),
        Opt(
            "--dataset",
            metavar="FILE.py:NAME",
            help="Check and time your own Dataset (a class or a function returning one) instead of the "
            "synthetic ones.",
        ),
        Opt(
            "--loader",
            metavar="FILE.py:NAME",
            help="Check your own DataLoader as given: NAME() returns a DataLoader or "
            "(dataset, loader_kwargs).",
        ),
        Opt(
            "--sweep",
            dest="sweep_text",
            metavar="NAMES",
            help="With --loader: the DataLoader arguments envguard may vary while timing your loader "
            "(num_workers, prefetch_factor); everything else stays as your loader sets it.",
        ),
        Opt(
            "--start-method",
            choices=("fork", "spawn", "forkserver"),
            help="Start every DataLoader's workers this way (default: the environment's own default).",
        ),
        Opt(
            "--local-ranks",
            kind="int",
            minimum=1,
            default=1,
            show_default=True,
            help="Training processes per node: the per-worker memory projection multiplies by it.",
        ),
        Opt(
            "--memory-limit",
            metavar="SIZE",
            check=_memory_limit,
            help="Memory each process of the run (the module, every DataLoader worker) may allocate, "
            "e.g. 8G; none for no limit (default: 3/4 of the memory available, at least 2G).",
        ),
        Opt(
            "--lock",
            kind="path",
            exists=True,
            dir_okay=False,
            as_path=True,
            help="Compare the seeded streams with the fingerprints recorded in this lock or snapshot.",
        ),
        Opt(
            "--record",
            kind="path",
            dir_okay=False,
            as_path=True,
            metavar="FILE.json",
            help="Write the first batches' per-sample digests and this environment's fingerprints to "
            "FILE.json.",
        ),
        Opt(
            "--compare",
            kind="path",
            dir_okay=False,
            as_path=True,
            metavar="FILE.json",
            help="Check the first batches against a --record file from another machine or environment "
            "(exit 1 on a mismatch).",
        ),
        Opt(
            "--seed",
            metavar="INT",
            default="1234",
            check=_seed,
            show_default=True,
            help="Seed of the determinism runs (and of the sampler with --distributed).",
        ),
        Opt(
            "--distributed",
            flag=True,
            help="One per rank under torchrun, srun or mpirun: compare environments, locks and "
            "DistributedSampler shards across ranks.",
        ),
        Opt(
            "--timeout",
            metavar="SECONDS",
            check=number("--timeout", 1.0, "seconds"),
            help="With --distributed: how long a rank waits for the others before naming those missing "
            "(default 300).",
        ),
        Opt(
            "--plot",
            kind="path",
            dir_okay=False,
            as_path=True,
            help="Write a PNG of throughput against workers (needs matplotlib).",
        ),
        *styles(),
    ],
)


def run(
    source: str | None,
    device: str,
    budget: float,
    workers_text: str | None,
    num_workers: int | None,
    batch_size: int,
    io_ms: float,
    cpu_ms: float,
    step_ms: float | None,
    step_cores: float | None,
    step_threads: int | None,
    data_dir: Path | None,
    decode: str | None,
    dataset: str | None,
    loader: str | None,
    sweep_text: str | None,
    start_method: str | None,
    local_ranks: int,
    memory_limit: int | None,
    lock: Path | None,
    record: Path | None,
    compare: Path | None,
    seed: int,
    distributed: bool,
    timeout: float | None,
    plot: Path | None,
    style: Style,
    output: str | None,
) -> int:
    """Prove that SOURCE (a prefix or name:ENV; default: the active environment) loads data deterministically
    and fast: determinism checks, a num_workers sweep, GPU copy speed, verdicts with fixes. Exit 1 on any
    FAIL."""
    if loader and (dataset or data_dir):
        raise UsageError("--loader checks your own DataLoader as given; drop --dataset/--data (or --loader)")
    if dataset and data_dir:
        raise UsageError(
            "--data and --dataset are mutually exclusive: --data DIR times reading the files in DIR, "
            "--dataset FILE.py:NAME your own Dataset; give one"
        )
    if step_threads is not None and (not loader or step_ms is None):
        raise UsageError(
            "--step-threads describes the training step beside --loader FILE.py:NAME and --step-ms; "
            "give them (or drop --step-threads)"
        )
    sweep = _sweep(sweep_text, loader)
    if decode and not data_dir:
        raise UsageError("--decode image decodes the files of --data DIR; add --data DIR (or drop --decode)")
    if distributed or timeout is not None:
        return _distributed(source, lock, data_dir, seed, timeout, distributed, memory_limit, style, output)
    # smoke's pipeline loads only when it runs (its imports take ~0.17 s): --help and usage errors stay fast
    from envguard.smoke import render
    from envguard.smoke.report import SmokeOptions
    from envguard.smoke.run import run_smoke

    if plot is not None and not render.matplotlib_available():
        raise UsageError(
            f"--plot {plot}: matplotlib is not installed in envguard's environment; "
            "pip install matplotlib, or drop --plot"
        )
    options = SmokeOptions(
        source=source,
        device=device,  # type: ignore[arg-type]
        budget_s=budget,
        workers=_workers(workers_text),
        num_workers=num_workers,
        batch_size=batch_size,
        io_ms=io_ms,
        cpu_ms=cpu_ms,
        step_ms=step_ms,
        step_cores=step_cores or 0.0,
        step_threads=step_threads,
        data_dir=data_dir,
        dataset=dataset,
        lock=lock,
        seed=seed,
        loader=loader,
        start_method=start_method,
        local_ranks=local_ranks,
        sweep=sweep,
        decode=decode,
        record=record,
        compare=compare,
        memory_limit=memory_limit,
    )
    report = run_smoke(options, progress=progress_wanted(style))
    if plot is not None:
        write_bytes(plot, render.plot_png(report))
    present(render.views(report), style, output)
    return exit_code(report.findings)


def _distributed(
    source: str | None,
    lock: Path | None,
    data_dir: Path | None,
    seed: int,
    timeout: float | None,
    distributed: bool,
    memory_limit: int | None,
    style: Style,
    output: str | None,
) -> int:
    """`--distributed`: this rank's part of the check across ranks; rank 0 writes the report, every rank
    returns the same exit code. Each rank runs under --memory-limit (default as for a plain run)."""
    # the distributed package adds ~30 ms of imports (sources, socket) a plain run skips
    from envguard.distributed import render
    from envguard.distributed.run import DEFAULT_TIMEOUT_S, run_distributed_check
    from envguard.machine import host
    from envguard.smoke.settings import per_process_limit

    if not distributed:
        raise UsageError("--timeout is how long --distributed waits for the other ranks; add --distributed")
    result = run_distributed_check(
        source,
        lock=lock,
        data_dir=data_dir,
        seed=seed,
        timeout_s=DEFAULT_TIMEOUT_S if timeout is None else timeout,
        memory_limit=per_process_limit(memory_limit, host.memory_info()),
    )
    if result.rank == 0:  # every rank judges alike; one prints
        present(render.views(result, "smoke --distributed"), style, output)
    return exit_code(result.findings)
