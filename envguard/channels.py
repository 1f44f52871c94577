"""Channel names and URLs: normalised for comparison, with credentials stripped before anything is shown."""

from __future__ import annotations

import functools
import json
import os
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from envguard.errors import BadInputError

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
        "linux-loongarch64",
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
# a scheme of at most 64 characters: unbounded, each start in a long run of letters scanned the whole run (a
# 20,000-character package name made printing an SBOM take 6.5 s, quadratic); a longer scheme still has its
# credentials removed, the match starting within its last 64 characters
_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{0,63}://)(?P<rest>[^\s'\"<>]*)")
_KEEP_USER = ("ssh://", "git+ssh://", "hg+ssh://", "svn+ssh://", "bzr+ssh://")


def check_platform(platform: str) -> str:
    """`platform` when it is a conda platform (a known subdir other than noarch); else bad input (exit 2)
    naming it and the choices."""
    if platform in KNOWN_SUBDIRS and platform != "noarch":
        return platform
    common = "linux-64, linux-aarch64, osx-64, osx-arm64, win-64"
    raise BadInputError(
        f"platform {platform!r} (from --platform or the file's `platforms:`) is not a conda platform; "
        f"use one of {common} (or another conda subdir except noarch)"
    )


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


def merge(first: Sequence[str], then: Sequence[str]) -> tuple[str, ...]:
    """`-c` channels before a file's own, as conda's `-c` goes before the configured ones; each channel once
    (compared by `normalize`)."""
    merged: list[str] = []
    for channel in (*first, *then):
        if channel and normalize(channel) not in (normalize(c) for c in merged):
            merged.append(channel)
    return tuple(merged)


def channel_from_url(url: str) -> tuple[str, str]:
    """Split a package URL into (normalised channel, subdir)."""
    return _channel_of_folder(url.rsplit("/", 1)[0])


@functools.lru_cache(maxsize=256)
def _channel_of_folder(raw: str) -> tuple[str, str]:
    """(channel, subdir) of a package URL's folder; a prefix's thousands of packages share a few folders."""
    folder = _without_dot_segments(strip_credentials(raw))
    channel, _, subdir = folder.rpartition("/")
    if subdir not in KNOWN_SUBDIRS:
        return normalize(folder), ""
    return normalize(channel), subdir


def _without_dot_segments(url: str) -> str:
    """The URL with `.` and `..` path segments resolved (RFC 3986's remove_dot_segments): `…/linux-64/../
    linux-64` is `…/linux-64`, as every server and conda read it."""
    if "/." not in url:
        return url
    scheme, sep, rest = url.partition("://")
    if not sep:
        return posixpath.normpath(url)
    host, _, path = rest.partition("/")
    return f"{scheme}://{host}/{posixpath.normpath('/' + path).lstrip('/')}"


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


def aliased(channel: str, alias: str | None) -> str:
    """A bare channel name (`conda-forge`, `pkgs/main` excepted) under conda's `channel_alias` (a condarc's
    mirror of anaconda.org, a token in it kept: `remember` takes it); anything else as it is."""
    if not alias or "://" in channel or channel.startswith(("/", ".", "~")) or channel.startswith("pkgs/"):
        return channel
    return f"{alias.rstrip('/')}/{channel}"


@dataclass(frozen=True)
class Credential:
    """A channel credential kept in memory only: an anaconda.org-style `/t/<token>` at the start of the path,
    or `user:password@`. `host` is the URL's host without the port (rattler keys credentials so)."""

    host: str
    token: str = ""
    username: str = ""
    password: str = ""

    def rattler_entry(self) -> dict[str, object]:
        """This credential as one value of rattler's RATTLER_AUTH_FILE JSON (keyed by host)."""
        if self.token:
            return {"CondaToken": self.token}
        return {"BasicHTTP": {"username": self.username, "password": self.password}}


_ROOT_TOKEN = re.compile(r"^/t/(?P<token>[^/\s'\"<>]+)(?=/|$)")
_MEMORY: dict[str, Credential] = {}
_CONFLICTS: set[str] = set()


def split_credential(url: str) -> tuple[str, Credential | None]:
    """(`url` without its credential, the credential) for `scheme://user:pw@host/...` and
    `scheme://host/t/<token>/...` (the token must start the path: rattler's token authentication puts
    `/t/<token>` in front of the whole path); other strings pass unchanged with None."""
    try:
        parts = urlsplit(url) if "://" in url else None
    except ValueError:  # a malformed IPv6 host: nothing to keep, the scrubber still strips what it can
        return strip_credentials(url), None
    if parts is None or not parts.hostname or (parts.password is None and not parts.path.startswith("/t/")):
        return url, None
    token = _ROOT_TOKEN.match(parts.path)
    if token is None and parts.password is None:
        return url, None
    host = parts.hostname
    if token is not None:
        credential = Credential(host, token=token.group("token"))
    else:
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        credential = Credential(host, username=user, password=password)
    return strip_credentials(url), credential


def remember(url: str) -> str:
    """Keep `url`'s credential in this process's memory (never on disk) for the solver and the installer to
    hand to rattler; return the URL without it."""
    clean, credential = split_credential(url)
    if credential is not None:
        _MEMORY.setdefault(credential.host, credential)
        if _MEMORY[credential.host] != credential:
            _CONFLICTS.add(credential.host)
    return clean


def remembered() -> tuple[Credential, ...]:
    """Every channel credential this process was given, one per host; bad input when one host was given two
    (rattler's authentication storage keeps one per host), raised only when they are about to be used."""
    if _CONFLICTS:
        hosts = ", ".join(sorted(_CONFLICTS))
        raise BadInputError(
            f"two different credentials for the channel host {hosts}; rattler keeps one per host: use one "
            "token or user:password for all of that host's channels"
        )
    return tuple(_MEMORY[host] for host in sorted(_MEMORY))


def user_auth_entries() -> dict[str, Any]:
    """The user's own rattler authentication file (`$RATTLER_AUTH_FILE`: JSON, host -> {"CondaToken": ...}
    or {"BasicHTTP": {...}}), {} when unset or unreadable."""
    path = os.environ.get("RATTLER_AUTH_FILE")
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def credential_for(url: str) -> Credential | None:
    """The credential for `url`'s host: one this process was given (a channel URL with it), else the user's
    rattler authentication file's entry (as rattler would use it); None when neither has one."""
    host = urlsplit(url).hostname or ""
    for credential in remembered():
        if credential.host == host:
            return credential
    entry = user_auth_entries().get(host)
    if not isinstance(entry, dict):
        return None
    token, basic = entry.get("CondaToken"), entry.get("BasicHTTP")
    if isinstance(token, str) and token:
        return Credential(host, token=token)
    if isinstance(basic, dict):
        return Credential(
            host, username=str(basic.get("username", "")), password=str(basic.get("password", ""))
        )
    return None


def forget() -> None:
    """Drop every remembered credential (tests, and long-lived callers between runs)."""
    _MEMORY.clear()
    _CONFLICTS.clear()
