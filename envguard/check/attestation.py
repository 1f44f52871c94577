"""`envguard check --attestation FILE`: is this environment the one `envguard verify --attest` proved?

Offline, in order: the signature (an ed25519 public key, or a Sigstore bundle's identity), the statement
(an in-toto Statement v1 of envguard's predicate), the lock (its sha256 against the attested one), and the
live environment's manifest against the attested manifest, package by package. A signature that does not
verify is refused in one line (exit 1); an unreadable or foreign file is bad input (exit 2).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from envguard import sources
from envguard.attest import envelope
from envguard.attest.statement import (
    PAYLOAD_TYPE,
    Attested,
    manifest,
    manifest_changes,
    read_statement,
)
from envguard.check.discovery import find_lock
from envguard.check.report import CheckReport
from envguard.diff.changes import Difference
from envguard.errors import BadInputError
from envguard.sources import Source
from envguard.textio import read_bytes


def attestation_report(
    path: Path,
    source: Source,
    *,
    key: Path | None,
    lock: Path | None,
    identity: str | None = None,
    issuer: str | None = None,
) -> CheckReport:
    """The check of SOURCE against the attestation at `path` (its lock: `lock`, else the one check finds)."""
    opened = envelope.open_envelope(path, key, identity, issuer)
    if opened.payload_type != PAYLOAD_TYPE:
        raise BadInputError(f"{path}: payload type {opened.payload_type!r}, not an in-toto statement")
    attested = read_statement(opened.payload, str(path))
    findings: list[Difference] = []
    lock_path = lock or find_lock()
    findings += _lock_findings(lock_path, attested)
    live = sources.load(source)
    findings += _manifest_findings(manifest(live), attested)
    notes = (
        f"signed by {opened.signer}",
        f"attested {attested.verified_at or 'at an unknown time'} by envguard {attested.envguard_version} "
        f"for {attested.platform} ({len(attested.manifest)} package(s))",
    )
    label = live.source or live.prefix or live.kind
    return CheckReport(str(path), label, tuple(findings), notes)


def _lock_findings(lock: Path, attested: Attested) -> list[Difference]:
    try:
        digest = hashlib.sha256(read_bytes(lock)).hexdigest()
    except OSError as exc:
        raise BadInputError(f"{lock}: cannot read the lock ({exc.strerror}); pass --lock FILE") from exc
    if digest == attested.lock_sha256:
        return []
    text = (
        f"{lock} is not the lock that was attested ({attested.lock}): sha256 {digest[:16]}…, attested "
        f"{attested.lock_sha256[:16]}…"
    )
    return [
        Difference("attestation", "changed", "lock", attested.lock_sha256, digest, ("sha256",), text=text)
    ]


def _manifest_findings(live: tuple[str, ...], attested: Attested) -> list[Difference]:
    findings = []
    for item, before, after in manifest_changes(attested.manifest, live):
        category, name = item.split(" ", 1)
        category = "pip" if category == "pypi" else "conda"
        if before is None:
            kind, text = "only-b", f"{after}: installed, not in the attested environment"
        elif after is None:
            kind, text = "only-a", f"{before}: attested, not installed"
        else:
            kind, text = "changed", f"{name}: attested {_what(before)}, installed {_what(after)}"
        findings.append(Difference(category, kind, name, before, after, ("manifest",), text=text))
    return findings


def _what(line: str) -> str:
    """A manifest line without its kind: `linux-64/numpy-1.26.4-py311h_0 sha256:…`."""
    return line.partition(" ")[2]
