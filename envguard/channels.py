"""Channel names and URLs: normalised for comparison, with credentials stripped before anything is shown."""

from __future__ import annotations

import re
from collections.abc import Sequence

ANACONDA_ORG = "https://conda.anaconda.org/"
REPO_ANACONDA = "https://repo.anaconda.com/"
KNOWN_SUBDIRS = frozenset(
    {
        "noarch",
        "linux-64",
        "linux-32",
        "linux-aarch64",
        "linux-ppc64le",
        "linux-s390x",
        "linux-armv7l",
        "linux-armv6l",
        "linux-riscv64",
        "osx-64",
        "osx-arm64",
        "win-64",
        "win-32",
        "win-arm64",
        "emscripten-wasm32",
        "wasi-wasm32",
        "zos-z",
    }
)
DEFAULTS = ("https://repo.anaconda.com/pkgs/main", "https://repo.anaconda.com/pkgs/r")
_TOKEN = re.compile(r"/t/[^/]+")


def strip_credentials(url: str) -> str:
    """Remove `user:password@` and anaconda.org `/t/<token>` parts from a URL; other strings pass
    unchanged."""
    if "://" not in url or ("@" not in url and "/t/" not in url):
        return url
    from urllib.parse import urlsplit, urlunsplit  # only URLs that carry credentials get here

    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    path = _TOKEN.sub("", parts.path)
    return urlunsplit((parts.scheme, netloc, path, parts.query, parts.fragment))


def normalize(channel: str) -> str:
    """Canonical channel name: `conda-forge` for conda.anaconda.org/conda-forge, `pkgs/main` for
    repo.anaconda.com/pkgs/main, otherwise the credential-free URL without a trailing slash or subdir."""
    value = strip_credentials(channel.strip()).rstrip("/")
    if not value:
        return value
    last = value.rsplit("/", 1)[-1]
    if last in KNOWN_SUBDIRS and "/" in value:
        value = value.rsplit("/", 1)[0]
    for prefix in (ANACONDA_ORG, "http://conda.anaconda.org/"):
        if value.startswith(prefix):
            return value[len(prefix) :]
    for prefix in (REPO_ANACONDA, "http://repo.anaconda.com/"):
        if value.startswith(prefix):
            return value[len(prefix) :]
    if value.startswith("file://"):
        return value
    return value


def channel_from_url(url: str) -> tuple[str, str]:
    """Split a package URL into (normalised channel, subdir)."""
    clean = strip_credentials(url)
    folder = clean.rsplit("/", 1)[0]
    channel, _, subdir = folder.rpartition("/")
    if subdir not in KNOWN_SUBDIRS:
        return normalize(folder), ""
    return normalize(channel), subdir


def expand_channels(channels: Sequence[str], specs: Sequence[str] = ()) -> list[str]:
    """Channel list for rattler: `defaults` expanded, `nodefaults` dropped, `channel::pkg` channels
    appended."""
    result: list[str] = []
    for channel in channels:
        if channel == "nodefaults":
            continue
        for item in DEFAULTS if channel == "defaults" else (channel,):
            if item not in result:
                result.append(item)
    for spec in specs:
        if "::" in spec:
            channel = spec.split("::", 1)[0].strip()
            if "/" in channel and channel.rsplit("/", 1)[-1] in KNOWN_SUBDIRS:
                channel = channel.rsplit("/", 1)[0]  # `conda-forge/linux-aarch64::numpy` names conda-forge
            if channel and channel not in result:
                result.append(channel)
    return result
