"""What an envguard attestation says (pure): an in-toto Statement v1 whose subjects are the lock and the
rebuilt environment's manifest, and whose predicate records what `envguard verify` checked and found.

The manifest is one line per conda record and pip dist-info, sorted: a conda package by its subdir, file
name and archive digest (the lock's sha256, else md5), a pip package by its PEP 503 name and version (and
the commit of a VCS install). Nothing in it depends on where the environment lives, so the environment
verify rebuilt in a temporary prefix and one created from the same lock elsewhere have the same manifest
and the same digest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from envguard.errors import BadInputError
from envguard.model import Environment, Package
from envguard.specs import canonical_name

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
# envguard's own predicate, versioned: a new major version gets a new URI
PREDICATE_TYPE = "https://envguard.dev/attestation/environment/v1"
MANIFEST_SUBJECT = "envguard-manifest"
FIX = "make a new one with `envguard verify --attest FILE --key KEY`"


def manifest_line(package: Package) -> str:
    """`conda linux-64/numpy-1.26.4-py311h64a7726_0 sha256:...` or `pypi six==1.16.0`."""
    if package.manager == "pip":
        line = f"pypi {canonical_name(package.name)}=={package.version}"
        origin = package.origin
        if origin is not None and origin.vcs and origin.commit_id:
            line += f" {origin.vcs}@{origin.commit_id}"
        return line
    digest = f"sha256:{package.sha256}" if package.sha256 else f"md5:{package.md5}" if package.md5 else "-"
    build = f"-{package.build}" if package.build else ""
    return f"conda {package.subdir or 'unknown'}/{package.name}-{package.version}{build} {digest}"


def manifest(env: Environment) -> tuple[str, ...]:
    """Every conda record and pip dist-info of `env` as a manifest line, sorted."""
    return tuple(sorted(manifest_line(p) for p in env.packages))


def digest_of(lines: Sequence[str]) -> str:
    """sha256 of the manifest: its lines, each ended by a newline."""
    return hashlib.sha256("".join(f"{line}\n" for line in lines).encode()).hexdigest()


@dataclass(frozen=True)
class Predicate:
    """What verify checked and found, as the predicate records it (JSON-ready values)."""

    lock: str
    lock_sha256: str
    platform: str
    manifest: tuple[str, ...]
    stages: tuple[Mapping[str, Any], ...]
    virtual_packages: tuple[str, ...] = ()
    cuda: Mapping[str, Any] | None = None
    fingerprints: Mapping[str, Any] | None = None
    envguard_version: str = ""
    verified_at: str = ""


def statement(predicate: Predicate) -> dict[str, Any]:
    """The in-toto Statement v1: the lock's and the manifest's digests as subjects, envguard's predicate."""
    p = predicate
    body: dict[str, Any] = {
        "envguard": {"version": p.envguard_version},
        "verifiedAt": p.verified_at,
        "lock": {"name": p.lock, "digest": {"sha256": p.lock_sha256}},
        "platform": p.platform,
        "virtualPackages": list(p.virtual_packages),
        "cuda": dict(p.cuda or {}),
        "fingerprints": dict(p.fingerprints) if p.fingerprints is not None else None,
        "checks": [dict(s) for s in p.stages],
        "manifest": {"digest": {"sha256": digest_of(p.manifest)}, "entries": list(p.manifest)},
    }
    return {
        "_type": STATEMENT_TYPE,
        "subject": [
            {"name": p.lock, "digest": {"sha256": p.lock_sha256}},
            {"name": f"{MANIFEST_SUBJECT}:{p.platform}", "digest": {"sha256": digest_of(p.manifest)}},
        ],
        "predicateType": PREDICATE_TYPE,
        "predicate": body,
    }


def payload(data: Mapping[str, Any]) -> bytes:
    """The statement as the DSSE payload: compact, sorted JSON (the bytes that are signed)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True)
class Attested:
    """What an attestation claims, read back from its statement."""

    lock: str
    lock_sha256: str
    manifest_sha256: str
    manifest: tuple[str, ...]
    platform: str
    envguard_version: str
    verified_at: str
    fingerprints: Mapping[str, Any] | None


def read_statement(data: bytes, origin: str) -> Attested:
    """An envguard Statement from the DSSE payload; anything else is bad input naming `origin`."""
    try:
        parsed = json.loads(data)
    except RecursionError as exc:
        raise BadInputError(f"{origin}: the signed payload is JSON nested too deeply to read; {FIX}") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadInputError(f"{origin}: the signed payload is not JSON ({exc}); {FIX}") from exc
    if not isinstance(parsed, dict) or parsed.get("_type") != STATEMENT_TYPE:
        raise BadInputError(f"{origin}: not an in-toto Statement v1; {FIX}")
    if parsed.get("predicateType") != PREDICATE_TYPE:
        raise BadInputError(
            f"{origin}: an in-toto statement of type {parsed.get('predicateType')!r}, not an envguard "
            f"environment attestation ({PREDICATE_TYPE}); {FIX}"
        )
    try:
        predicate = parsed["predicate"]
        subjects = {s["name"]: s["digest"]["sha256"] for s in parsed["subject"]}
        lock = predicate["lock"]
        platform = str(predicate["platform"])
        manifest_name = f"{MANIFEST_SUBJECT}:{platform}"
        entries = tuple(str(e) for e in predicate["manifest"]["entries"])
        result = Attested(
            lock=str(lock["name"]),
            lock_sha256=str(subjects[lock["name"]]),
            manifest_sha256=str(subjects[manifest_name]),
            manifest=entries,
            platform=platform,
            envguard_version=str(predicate.get("envguard", {}).get("version", "")),
            verified_at=str(predicate.get("verifiedAt", "")),
            fingerprints=predicate.get("fingerprints"),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise BadInputError(f"{origin}: a malformed envguard attestation (missing {exc}); {FIX}") from exc
    if digest_of(result.manifest) != result.manifest_sha256:
        raise BadInputError(f"{origin}: its manifest does not hash to its subject's digest; {FIX}")
    return result


def manifest_changes(
    attested: Sequence[str], live: Sequence[str]
) -> list[tuple[str, str | None, str | None]]:
    """(item, attested line, live line) for every package whose line differs, by item (`conda
    linux-64/numpy`, `pypi six`), sorted."""
    before, after = _by_item(attested), _by_item(live)
    return [
        (item, before.get(item), after.get(item))
        for item in sorted(before.keys() | after.keys())
        if before.get(item) != after.get(item)
    ]


def _by_item(lines: Sequence[str]) -> dict[str, str]:
    return {item_of(line): line for line in lines}


def item_of(line: str) -> str:
    """The package a manifest line is about: `conda numpy` or `pypi six`."""
    kind, _, rest = line.partition(" ")
    if kind == "pypi":
        return f"pypi {rest.split('==', 1)[0]}"
    name_version_build = rest.split(" ", 1)[0].rsplit("/", 1)[-1]
    return f"conda {name_version_build.rsplit('-', 2)[0]}"
