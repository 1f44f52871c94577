"""`envguard verify [--lock FILE] [--platform P] [--smoke] [--keep] [--pkgs-dir DIR] [--json |
--markdown]`."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import click

from envguard.attest.envelope import Signing
from envguard.cli.options import Rule, declared, platform_option, styles
from envguard.errors import EXIT_DRIFT, EXIT_OK, BadInputError, UsageError
from envguard.output import Style, present, progress_wanted, report_on_error, warn
from envguard.verify import render
from envguard.verify import run as verifying

SIGNS = "{} signs an attestation; add --attest FILE"
PATH = click.Path(dir_okay=False)


@declared(
    "verify",
    rules=[
        Rule(name, SIGNS.format(flag), needs=("attest",))
        for name, flag in (("key", "--key"), ("keyless", "--keyless"), ("unsigned", "--unsigned"))
    ],
    alternatives=[("--key", "--keyless", "--unsigned")],
)
@click.option(
    "--lock",
    "lockfile",
    default="conda-lock.yml",
    show_default=True,
    metavar="FILE",
    help="The lock to rebuild (conda-lock.yml, explicit spec or pixi.lock).",
)
@platform_option("Platform of the lock to rebuild (default: this machine's).")
@click.option("--smoke", is_flag=True, help="Also run the DataLoader smoke test in the rebuilt environment.")
@click.option(
    "--smoke-budget",
    type=click.FloatRange(min=3),
    default=25.0,
    show_default=True,
    help="Seconds the smoke test may take.",
)
@click.option("--keep", is_flag=True, help="Keep the rebuilt environment and print where it is.")
@click.option(
    "--pkgs-dir",
    type=click.Path(file_okay=False),
    help="Package cache to read archives from (and download missing ones into; made when missing): offline "
    "when it holds them all.",
)
@click.option(
    "--attest",
    type=PATH,
    metavar="FILE",
    help="After a PASS, write an in-toto attestation (a DSSE envelope) of the rebuilt environment.",
)
@click.option("--key", type=PATH, metavar="KEY", help="Sign it with this ed25519 PEM key.")
@click.option("--keyless", is_flag=True, help="Sign it with sigstore and the CI job's OIDC identity.")
@click.option("--unsigned", is_flag=True, help="Write the statement unsigned (nothing vouches for it).")
@styles()
def verify(
    lockfile: str,
    platform: str | None,
    smoke: bool,
    smoke_budget: float,
    keep: bool,
    pkgs_dir: str | None,
    attest: str | None,
    key: str | None,
    keyless: bool,
    unsigned: bool,
    style: Style,
    output: str | None,
) -> int:
    """Rebuild the lock in a temporary prefix (hashes checked), check it, optionally smoke-test it.

    With --attest FILE (and --key KEY, --keyless or --unsigned), a PASS writes a signed in-toto attestation
    that `envguard check --attestation FILE` verifies. Exit 0 pass, 1 verification failed (hash mismatch,
    drift, smoke), 2 bad input, 3 operational failure.
    """
    with report_on_error("verify", style, output), contextlib.ExitStack() as later:
        signing = _signing(attest, key, keyless, unsigned)
        # the temporary prefix is deleted once the report is out
        options = verifying.VerifyOptions(
            Path(lockfile),
            platform,
            smoke,
            keep,
            _pkgs_dir(pkgs_dir),
            smoke_budget=smoke_budget,
            progress=progress_wanted(style),
            attest=Path(attest) if attest else None,
            signing=signing,
        )
        result = verifying.verify(options, later)
        for message in result.warnings:
            warn(message)
        present(render.views(result), style, output)
    return EXIT_OK if result.passed else EXIT_DRIFT


def _signing(attest: str | None, key: str | None, keyless: bool, unsigned: bool) -> Signing:
    """--attest's signing: one of --key, --keyless or --unsigned, which mean nothing without --attest."""
    if attest is None:
        return Signing("unsigned")
    if not (key or keyless or unsigned):
        raise UsageError(
            "--attest FILE: say how to sign it: --key KEY (an ed25519 PEM key: `openssl genpkey -algorithm "
            "ed25519 -out KEY`), --keyless (sigstore, in CI) or --unsigned"
        )
    if key:
        return Signing("key", Path(key))
    return Signing("keyless" if keyless else "unsigned")


def _pkgs_dir(value: str | None) -> Path | None:
    """--pkgs-dir: an existing folder, or one made here (a CI cache that missed: `actions/cache` restores
    nothing on the first run, and the folder is where this run's downloads go)."""
    if not value:
        return None
    path = Path(value).expanduser()
    if os.path.exists(path) and not os.path.isdir(path):  # os.path: a name too long is no file either
        raise BadInputError(f"--pkgs-dir {value}: not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInputError(
            f"--pkgs-dir {value}: cannot create it ({exc.strerror}); pass a folder you can write"
        ) from exc
    return path
