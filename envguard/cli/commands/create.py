"""`envguard create [-f environment.yml | --lock FILE | SPEC ...] [-c CHANNEL ...] [--name NAME | --prefix
DIR] [--backend B] [--jupyter] [--force] [--dry-run] [--no-lock] [--json]`."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from envguard.cli.grammar import Arg, Command, Opt, channel_option, styles
from envguard.create import naming, render
from envguard.create import run as create
from envguard.engine import backends
from envguard.engine.backends import CHOICES
from envguard.errors import EXIT_OK, UsageError
from envguard.machine.platform import current_platform
from envguard.output import Style, present, progress_wanted, warn

GRAMMAR = Command(
    "create",
    [Arg("specs", many=True)],
    [
        Opt("-f", "--file", dest="envfile", metavar="FILE", help="Create from this environment.yml."),
        Opt(
            "--lock",
            dest="lockfile",
            metavar="FILE",
            help="Install exactly this lock (conda-lock.yml, explicit, pixi.lock).",
        ),
        channel_option("Channel"),
        Opt("-n", "--name", help="Environment name (default: the semantic name, see `envguard name`)."),
        Opt("-p", "--prefix", metavar="DIR", help="Create at this path instead of conda's envs dir."),
        Opt(
            "--backend",
            choices=CHOICES,
            help="conda, mamba, micromamba or embedded (default: $ENVGUARD_BACKEND, else the first tool on "
            "PATH, else embedded).",
        ),
        Opt("--jupyter", flag=True, help="Register a Jupyter kernel named after the environment."),
        Opt("--force", flag=True, help="Replace an existing environment of the same name."),
        Opt("--dry-run", flag=True, help="Solve and name, but install nothing."),
        Opt("--no-lock", flag=True, help="Do not write conda-lock.yml beside the environment.yml."),
        *styles(markdown=False, output=False),
    ],
)


def run(
    specs: tuple[str, ...],
    envfile: str | None,
    lockfile: str | None,
    channels: tuple[str, ...],
    name: str | None,
    prefix: str | None,
    backend: str | None,
    jupyter: bool,
    force: bool,
    dry_run: bool,
    no_lock: bool,
    style: Style,
) -> int:
    """Create an environment with a semantic name (pytorch2.1-cuda118-py311) in conda's envs dir."""
    if name and prefix:
        raise UsageError("give --name or --prefix, not both")
    if name:
        naming.validate(name)
    platform = current_platform()
    source = create.read_source(envfile, lockfile, specs, channels, platform)
    chosen = backends.select(backend, progress=progress_wanted(style))
    target = Path(prefix) if prefix else None
    planned = create.plan(source, chosen, platform, name=name, prefix=target)
    with ThreadPoolExecutor(max_workers=1) as pool:
        early: list[Future[str]] = []

        def start_table() -> None:  # the human view's package table, rendered while the engine links
            early.append(pool.submit(render.package_table, planned.plan.packages, planned.source.specs))

        result = create.create(
            planned,
            chosen,
            prefix=target,
            force=force,
            dry_run=dry_run,
            jupyter=jupyter,
            write_lock=not no_lock,
            alongside=start_table if style == "human" else None,
        )
    same = bool(early) and result.packages == planned.plan.packages
    table = _early_table(early[0]) if same else None
    for message in result.warnings:
        warn(message)
    present(render.views(result, table), style, None)
    return EXIT_OK


def _early_table(early: Future[str]) -> str | None:
    """The table rendered ahead, or None where that failed (it is rendered again in this thread, which
    raises the error where it belongs)."""
    return None if early.exception() is not None else early.result()
