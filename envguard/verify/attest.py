"""verify's `attest` stage: after every other stage passed, measure the rebuilt environment's RNG
fingerprints, state what verify checked and found as an in-toto statement, sign it and write it."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envguard.atomic import write_bytes
from envguard.attest import envelope
from envguard.attest.envelope import Signing
from envguard.attest.statement import PAYLOAD_TYPE, Predicate, manifest, payload, statement
from envguard.check import check_environment, severity
from envguard.errors import EnvguardError
from envguard.machine.platform import current_platform
from envguard.model import Environment, Fingerprints
from envguard.prefix.probe import run_probe
from envguard.textio import read_bytes
from envguard.version import __version__


@dataclasses.dataclass(frozen=True)
class Attestation:
    """What the stage made: the file, how it was signed, the manifest's size, and whether fingerprints were
    measured (`problem` says why not, or why the stage failed)."""

    path: Path
    signed: str
    packages: int
    fingerprints: Fingerprints | None = None
    problem: str = ""
    failed: bool = False


def prepare(signing: Signing) -> Any:
    """The key's signer or the CI job's OIDC identity, before the rebuild: a bad key or no identity is bad
    input at once, not after minutes of installing (None for an unsigned statement)."""
    if signing.mode == "key":
        assert signing.key is not None
        return envelope.load_signer(signing.key)
    if signing.mode == "keyless":
        return envelope.oidc_identity()
    return None


def attest(
    target: Path,
    signing: Signing,
    signer: Any,
    *,
    lock: Path,
    locked: Environment,
    live: Environment,
    prefix: Path,
    platform: str,
    stages: Sequence[dict[str, Any]],
) -> Attestation:
    """Probe, state, sign and write the attestation of a verified environment."""
    fingerprints, problem = _fingerprints(prefix, platform)
    if fingerprints is not None and locked.fingerprints is not None:
        probed = dataclasses.replace(live, fingerprints=fingerprints)
        drift = [f for f in check_environment(probed, locked, rng=True).findings if severity(f) == "drift"]
        drift = [f for f in drift if f.category == "fingerprints"]
        if drift:
            detail = "; ".join(f.message() for f in drift)[:300]
            return Attestation(target, "", 0, fingerprints, f"RNG fingerprints differ: {detail}", failed=True)
    lines = manifest(live)
    predicate = Predicate(
        lock=lock.name,
        lock_sha256=hashlib.sha256(read_bytes(lock)).hexdigest(),
        platform=platform,
        manifest=lines,
        stages=tuple(stages),
        virtual_packages=tuple(f"{v.name}={v.version}={v.build}" for v in live.virtual_packages),
        cuda=dataclasses.asdict(live.cuda),
        fingerprints=dataclasses.asdict(fingerprints) if fingerprints is not None else None,
        envguard_version=__version__,
        verified_at=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    sealed = envelope.seal(payload(statement(predicate)), PAYLOAD_TYPE, signing, signer)
    write_bytes(target, sealed)
    how = {
        "key": f"signed with {signing.key}",
        "keyless": "signed keyless (sigstore)",
        "unsigned": "unsigned",
    }[signing.mode]
    return Attestation(target, how, len(lines), fingerprints, problem)


def _fingerprints(prefix: Path, platform: str) -> tuple[Fingerprints | None, str]:
    """The rebuilt environment's RNG fingerprints, or None and why they were not measured."""
    if platform != current_platform():
        return None, f"{platform} environments cannot run here: no RNG fingerprints"
    try:
        return run_probe(prefix), ""
    except EnvguardError as exc:
        return None, f"no RNG fingerprints ({exc})"
