"""A conda-lock.yml's pip entries as envguard Packages: the wheel's URL and sha256 as conda-lock writes them,
and what envguard records beside them in `custom_metadata` (each package's origin and index)."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from envguard.channels import strip_credentials
from envguard.formats import localsource
from envguard.formats.condalock import meta as lockmeta
from envguard.model import Package, PipOrigin
from envguard.specs import canonical_name

COMMIT = re.compile(r"^[0-9a-fA-F]{40}$")  # conda-lock stores a VCS pip package's commit id as its "sha256"
_VCS_URL = re.compile(r"^(git|hg|svn|bzr)\+(.+?)(?:@([^@/]+))?$")


def pip_package(
    entry: Mapping[str, Any], hashes: Mapping[str, str], custom: Mapping[str, str], platform: str, base: str
) -> Package:
    """A pip entry of a conda-lock.yml as a Package: its wheel's URL and sha256, the index it is on and the
    origin envguard recorded (a VCS checkout, a local folder, relative to the lock's folder `base`)."""
    name = canonical_name(str(entry["name"]))
    origins_text = custom.get(lockmeta.platform_key(platform, lockmeta.FIELD_PIP_ORIGINS))
    origin: PipOrigin | None = origins(origins_text).get(name) if origins_text else None
    source = entry.get("source")
    if origin is None and isinstance(source, dict) and source.get("url"):
        origin = origin_from_url(strip_credentials(str(source["url"])))
    if origin is None and localsource.is_relative(str(entry["url"])):  # the entry alone says where it is
        origin = PipOrigin(url=str(entry["url"]))
    if origin is not None and localsource.is_relative(origin.url):  # relative to this lock's folder
        origin = dataclasses.replace(origin, url=localsource.resolve(origin.url, base))
    sha256 = hashes.get("sha256", "")
    indexes_text = custom.get(lockmeta.platform_key(platform, lockmeta.FIELD_PIP_INDEXES))
    return Package(
        manager="pip",
        name=name,
        version=str(entry["version"]),
        channel=_indexes(indexes_text).get(name, "") if indexes_text else "",
        url=_pip_file_url(strip_credentials(str(entry["url"]))),
        sha256=sha256 if len(sha256) == 64 else "",
        origin=origin,
        depends=depends_from_mapping(entry.get("dependencies")),
    )


@functools.lru_cache(maxsize=4)
def origins(text: str) -> dict[str, PipOrigin]:
    """A platform's pip origins, decoded once per lock (per pip entry was quadratic in pip packages)."""
    return lockmeta.decode_origins(text)


@functools.lru_cache(maxsize=4)
def _indexes(text: str) -> dict[str, str]:
    """A platform's pip indexes (package -> the index its wheel is on), decoded once per lock."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return {str(k): strip_credentials(str(v)) for k, v in data.items()} if isinstance(data, dict) else {}


def _pip_file_url(url: str) -> str:
    """A pip entry's file URL; '' for a `name==version` entry (no file known) or an index page."""
    if "://" not in url or url.rstrip("/").rsplit("/", 2)[-2:-1] == ["simple"]:
        return ""
    return url


def origin_from_url(url: str) -> PipOrigin:
    """A direct-URL pip requirement (`git+https://host/repo.git@REV`, a file or archive URL) as a
    PipOrigin."""
    match = _VCS_URL.match(url)
    if not match:
        return PipOrigin(url=url)
    revision = match.group(3) or ""
    commit = revision if COMMIT.fullmatch(revision) else ""
    return PipOrigin(url=match.group(2), vcs=match.group(1), commit_id=commit, requested_revision=revision)


def depends_from_mapping(value: Any) -> tuple[str, ...]:
    """conda-lock's `{name: spec}` -> MatchSpec strings (`name spec`, or `name` for an empty spec)."""
    if not isinstance(value, dict):
        return ()
    return tuple([f"{k} {v}".strip() if v else str(k) for k, v in value.items()])  # a list: ~2x a generator
