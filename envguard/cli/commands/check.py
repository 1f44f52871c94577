"""`envguard check [SOURCE] [--lock FILE | -f environment.yml] [--rng] [--files] [--lock-fresh] [--json]`.

An unchanged environment's answer is the stored output of its last clean full check (envguard.check.fast),
and only a miss loads the check itself, so the body imports its feature where it needs it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from envguard.cli.options import Rule, declared, number, platform_option, styles
from envguard.errors import EXIT_OK

if TYPE_CHECKING:
    from envguard.output import Style  # json and the model: not on the fast path

NOT_DISTRIBUTED = (
    "--distributed compares the ranks' environments, locks and shards; drop -f, --platform, --files, "
    "--lock-fresh and --attestation (run those checks without --distributed)"
)
NOT_ATTESTED = "--attestation checks the attested packages; drop -f, --rng, --files and --lock-fresh"
ATTESTATION = "--key, --identity and --issuer check an attestation; add --attestation FILE"
RULES = (
    Rule(
        "timeout",
        "--timeout is how long --distributed waits for the other ranks; add --distributed",
        needs=("distributed",),
    ),
    Rule(
        "distributed",
        NOT_DISTRIBUTED,
        excludes=("envfile", "platform", "files", "lock_fresh", "attestation", "key", "identity", "issuer"),
    ),
    *(Rule(name, ATTESTATION, needs=("attestation",)) for name in ("key", "identity", "issuer")),
    Rule("attestation", NOT_ATTESTED, excludes=("envfile", "rng", "files", "lock_fresh")),
)
PATH = click.Path(dir_okay=False)


@declared("check", rules=RULES)
@click.argument("source", required=False)
@click.option(
    "--lock",
    type=PATH,
    help="Lock to check against (default: conda-lock.yml here or in a parent, or [tool.envguard] lock).",
)
@click.option(
    "-f",
    "--file",
    "envfile",
    type=PATH,
    help="environment.yml: check that every spec is satisfied and channels respected.",
)
@platform_option("Platform entry of the lock to use (default: the environment's).")
@click.option(
    "--rng", is_flag=True, help="Re-run the fingerprint probe and compare with the lock's fingerprints."
)
@click.option(
    "--files", is_flag=True, help="Verify every installed file against its package's recorded hashes."
)
@click.option(
    "--lock-fresh",
    is_flag=True,
    help="Only check that the lock still satisfies environment.yml on every platform (no environment).",
)
@styles(output=False)
@click.option("--no-cache", is_flag=True, help="Always run the full comparison.")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="List every finding of a long category (default: 10 of them, every kind in view).",
)
@click.option(
    "--attestation",
    type=PATH,
    metavar="FILE",
    help="Check that SOURCE is the environment `verify --attest` attested in FILE (signature, lock, every "
    "package), offline.",
)
@click.option("--key", type=PATH, metavar="PUB", help="The attestation's ed25519 public key.")
@click.option("--identity", help="A Sigstore bundle's signer (the CI workflow's identity).")
@click.option(
    "--issuer", help="A Sigstore bundle's OIDC issuer (e.g. https://token.actions.githubusercontent.com)."
)
@click.option(
    "--distributed",
    is_flag=True,
    help="One per rank under torchrun, srun or mpirun: compare every rank's environment, lock and "
    "DistributedSampler shards (gloo).",
)
@click.option(
    "--timeout",
    metavar="SECONDS",
    callback=number("--timeout", 1.0, "seconds"),
    help="With --distributed: how long a rank waits for the others before naming those missing "
    "(default 300).",
)
def check(
    source: str | None,
    lock: str | None,
    envfile: str | None,
    platform: str | None,
    rng: bool,
    files: bool,
    lock_fresh: bool,
    style: Style,
    no_cache: bool,
    show_all: bool,
    attestation: str | None,
    key: str | None,
    identity: str | None,
    issuer: str | None,
    distributed: bool,
    timeout: float | None,
) -> int:
    """Check SOURCE (default: the active environment) against a lock or an environment.yml; exit 0 clean, 1
    drift."""
    looked_up = False
    if distributed:
        return _distributed(source, lock, timeout, style)
    if attestation is not None:
        return _attested(source, lock, attestation, key, identity, issuer, style)
    if not (rng or files or lock_fresh or no_cache):
        from envguard.check import fast  # standard library only: the answer of an unchanged environment

        stored, looked_up = fast.answer(source, lock, envfile, platform, style)
        if stored is not None:
            sys.stdout.write(stored)
            return EXIT_OK
    from envguard.check import render
    from envguard.check.run import CheckOptions, check
    from envguard.output import emit, present, warn
    from envguard.textio import gc_paused

    options = CheckOptions(
        source,
        lock,
        envfile,
        platform,
        rng=rng,
        files=files,
        lock_fresh=lock_fresh,
        style=style,
        no_cache=no_cache,
        looked_up=looked_up,
    )
    with gc_paused():  # the whole check: as envguard.textio.gc_paused says
        checked = check(options)
        if checked.report is None:
            emit(checked.cached, None)
        else:
            for message in checked.report.warnings:
                warn(message)
            present(render.views(checked.report, show_all=show_all), style, None)
    return checked.exit_code


def _attested(
    source: str | None,
    lock: str | None,
    attestation: str,
    key: str | None,
    identity: str | None,
    issuer: str | None,
    style: Style,
) -> int:
    """`--attestation FILE --key PUB`: SOURCE against what verify attested; exit 0 the same, 1 not."""
    from pathlib import Path

    from envguard.check import render
    from envguard.check.attestation import attestation_report  # cryptography: for --attestation alone
    from envguard.errors import EXIT_DRIFT
    from envguard.output import present
    from envguard.sources import resolve

    report = attestation_report(
        Path(attestation),
        resolve(source),
        key=Path(key) if key else None,
        lock=Path(lock) if lock else None,
        identity=identity,
        issuer=issuer,
    )
    present(render.views(report), style, None)
    return EXIT_OK if report.clean else EXIT_DRIFT


def _distributed(
    source: str | None,
    lock: str | None,
    timeout: float | None,
    style: Style,
) -> int:
    """`--distributed`: this rank's part of the check across ranks; rank 0 prints, every rank exits alike."""
    # the distributed package adds ~30 ms of imports (sources, socket) a plain check skips
    from pathlib import Path

    from envguard.distributed import render
    from envguard.distributed.run import DEFAULT_TIMEOUT_S, run_distributed_check
    from envguard.findings import exit_code
    from envguard.output import present

    result = run_distributed_check(
        source,
        lock=Path(lock) if lock else None,
        seed=0,
        timeout_s=DEFAULT_TIMEOUT_S if timeout is None else timeout,
    )
    if result.rank == 0:  # every rank judges alike; one prints
        present(render.views(result, "check --distributed"), style, None)
    return exit_code(result.findings)
