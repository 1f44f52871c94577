"""Channel names and URLs: normalised for comparison, with credentials stripped before anything is shown."""

from __future__ import annotations

import functools
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
_TOKEN = re.compile(r"/t/[^/\s'\"<>]+")
_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<rest>[^\s'\"<>]*)")
_KEEP_USER = ("ssh://", "git+ssh://", "hg+ssh://", "svn+ssh://", "bzr+ssh://")


def scrub(text: str) -> str:
    """`text` with credentials removed from every URL inside it: `user:password@` (any userinfo, except a
    bare ssh user such as `git@`) and anaconda.org `/t/<token>` path parts. The one scrubber: specs, pip
    option lines (`--extra-index-url=URL`, a space or a tab), `pkg @ URL`, VCS URLs, history lines, argv and
    error messages all go through it before they are printed or written."""
    if "://" not in text or ("@" not in text and "/t/" not in text):
        return text
    return _URL.sub(_clean_url, text)


def _clean_url(match: re.Match[str]) -> str:
    scheme, rest = match.group("scheme"), match.group("rest")
    cut = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    if "@" in authority:
        user, host = authority.rsplit("@", 1)
        keep = scheme.lower() in _KEEP_USER and ":" not in user
        authority = f"{user}@{host}" if keep else host
    return scheme + authority + _TOKEN.sub("", tail)


def strip_credentials(url: str) -> str:
    """Remove `user:password@` and anaconda.org `/t/<token>` parts from a URL (or from every URL inside a
    string; see `scrub`); other strings pass unchanged."""
    return scrub(url)


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
    return _channel_of_folder(url.rsplit("/", 1)[0])


@functools.lru_cache(maxsize=256)
def _channel_of_folder(raw: str) -> tuple[str, str]:
    """(channel, subdir) of a package URL's folder; a prefix's thousands of packages share a few folders."""
    folder = strip_credentials(raw)
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
