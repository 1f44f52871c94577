"""`envguard check [SOURCE] [--lock FILE | -f environment.yml] [--rng] [--files] [--lock-fresh] [--json]`.

The console script answers this command itself (envguard.cli.launcher, without click): an unchanged
environment's answer is the stored output of its last clean full check (envguard.check.fast), and only a miss
loads the check itself, so the body imports its feature where it needs it.
"""

from __future__ import annotations

import sys

from envguard.cli.grammar import Arg, Command, Opt, styles
from envguard.errors import EXIT_OK

TYPE_CHECKING = False  # typing's constant would cost an import: the console script loads this module
if TYPE_CHECKING:
    from envguard.output import Style

GRAMMAR = Command(
    "check",
    [Arg("source", required=False)],
    [
        Opt(
            "--lock",
            kind="path",
            dir_okay=False,
            help="Lock to check against (default: conda-lock.yml here or in a parent, or "
            "[tool.envguard] lock).",
        ),
        Opt(
            "-f",
            "--file",
            dest="envfile",
            kind="path",
            dir_okay=False,
            help="environment.yml: check that every spec is satisfied and channels respected.",
        ),
        Opt(
            "--platform",
            platform=True,
            help="Platform entry of the lock to use (default: the environment's).",
        ),
        Opt(
            "--rng", flag=True, help="Re-run the fingerprint probe and compare with the lock's fingerprints."
        ),
        Opt("--files", flag=True, help="Verify every installed file against its package's recorded hashes."),
        Opt(
            "--lock-fresh",
            flag=True,
            help="Only check that the lock still satisfies environment.yml on every platform "
            "(no environment).",
        ),
        *styles(output=False),
        Opt("--no-cache", flag=True, help="Always run the full comparison."),
        Opt(
            "--all",
            dest="show_all",
            flag=True,
            help="List every finding of a long category (default: 10 of them, every kind in view).",
        ),
        Opt(
            "--attestation",
            kind="path",
            dir_okay=False,
            metavar="FILE",
            help="Check that SOURCE is the environment `verify --attest` attested in FILE (signature, lock, "
            "every package), offline.",
        ),
        Opt(
            "--key", kind="path", dir_okay=False, metavar="PUB", help="The attestation's ed25519 public key."
        ),
        Opt("--identity", help="A Sigstore bundle's signer (the CI workflow's identity)."),
        Opt(
            "--issuer",
            help="A Sigstore bundle's OIDC issuer (e.g. https://token.actions.githubusercontent.com).",
        ),
        Opt(
            "--distributed",
            flag=True,
            help="One per rank under torchrun, srun or mpirun: compare every rank's environment, lock and "
            "DistributedSampler shards (gloo).",
        ),
        Opt(
            "--timeout",
            kind="float",
            minimum=1,
            metavar="SECONDS",
            help="With --distributed: how long a rank waits for the others before naming those missing "
            "(default 300).",
        ),
    ],
)


def run(
    source: str | None,
    lock: str | None,
    envfile: str | None,
    platform: str | None,
    rng: bool,
    files: bool,
    lock_fresh: bool,
    no_cache: bool,
    show_all: bool,
    distributed: bool,
    timeout: float | None,
    attestation: str | None,
    key: str | None,
    identity: str | None,
    issuer: str | None,
    style: Style,
) -> int:
    """Check SOURCE (default: the active environment) against a lock or an environment.yml; exit 0 clean, 1
    drift."""
    taken = None
    if distributed or timeout is not None:
        others = (envfile, platform, files, lock_fresh, attestation, key, identity, issuer)
        return _distributed(source, lock, others, timeout, distributed, style)
    if attestation is not None or key or identity or issuer:
        return _attested(
            source, lock, attestation, key, identity, issuer, (envfile, rng, files, lock_fresh), style
        )
    if not (rng or files or lock_fresh or no_cache):
        from envguard.check import fast  # standard library only: the answer of an unchanged environment

        stored, taken = fast.answer(source, lock, envfile, platform, style)
        if stored is not None:
            sys.stdout.write(stored)
            return EXIT_OK
    from envguard.check import render
    from envguard.check.run import CheckOptions, check
    from envguard.output import emit, present
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
        taken=taken,
    )
    with gc_paused():  # the whole check: as envguard.textio.gc_paused says
        checked = check(options)
        if checked.report is None:
            emit(checked.cached, None)
        else:
            present(render.views(checked.report, show_all=show_all), style, None)
    return checked.exit_code


def _attested(
    source: str | None,
    lock: str | None,
    attestation: str | None,
    key: str | None,
    identity: str | None,
    issuer: str | None,
    others: tuple[object, ...],
    style: Style,
) -> int:
    """`--attestation FILE --key PUB`: SOURCE against what verify attested; exit 0 the same, 1 not."""
    from pathlib import Path

    from envguard.check import render
    from envguard.check.attestation import attestation_report  # cryptography: for --attestation alone
    from envguard.errors import EXIT_DRIFT, UsageError
    from envguard.output import present
    from envguard.sources import resolve

    if attestation is None:
        raise UsageError("--key, --identity and --issuer check an attestation; add --attestation FILE")
    if any(others):
        raise UsageError(
            "--attestation checks the attested packages; drop -f, --rng, --files and --lock-fresh"
        )
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
    others: tuple[object, ...],
    timeout: float | None,
    distributed: bool,
    style: Style,
) -> int:
    """`--distributed`: this rank's part of the check across ranks; rank 0 prints, every rank exits alike."""
    # the distributed package adds ~30 ms of imports (sources, socket) a plain check skips
    from math import isfinite
    from pathlib import Path

    from envguard.distributed import render
    from envguard.distributed.run import DEFAULT_TIMEOUT_S, run_distributed_check
    from envguard.errors import UsageError
    from envguard.findings import exit_code
    from envguard.output import present

    if not distributed:
        raise UsageError("--timeout is how long --distributed waits for the other ranks; add --distributed")
    if any(others):
        raise UsageError(
            "--distributed compares the ranks' environments, locks and shards; drop -f, --platform, --files, "
            "--lock-fresh and --attestation (run those checks without --distributed)"
        )
    if timeout is not None and not isfinite(timeout):
        raise UsageError(f"--timeout {timeout}: give a number of seconds, at least 1")
    result = run_distributed_check(
        source,
        lock=Path(lock) if lock else None,
        seed=0,
        timeout_s=DEFAULT_TIMEOUT_S if timeout is None else timeout,
    )
    if result.rank == 0:  # every rank judges alike; one prints
        present(render.views(result, "check --distributed"), style, None)
    return exit_code(result.findings)
